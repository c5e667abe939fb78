// What the runner executes for one test file: argv, environment, working folder and log paths.
// Pure functions of the suite, the run's options and the inherited environment, so that they are
// tested without starting anything.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runner/engine/discovery.h"
#include "runner/engine/environment.h"
#include "runner/engine/suite.h"

namespace devshim {

/// Variables the runner sets for the shim (docs/shim.md).
inline constexpr const char* kActivateVar = "ACTIVATE_TORCH_DEVICE";
/// The shim's redirection policy (docs/shim.md); "default" when unset.
inline constexpr const char* kPolicyVar = "TORCHDEVICE_POLICY";
inline constexpr const char* kMpsFallbackVar = "PYTORCH_ENABLE_MPS_FALLBACK";
/// The threads of an OpenMP runtime (torch's intra-op pool, MKL, OpenBLAS) in a test process.
inline constexpr const char* kThreadsVar = "OMP_NUM_THREADS";

struct LaunchOptions {
  bool shim = true;                ///< false: the baseline (--no-shim)
  std::filesystem::path shim_dir;  ///< folder holding sitecustomize.py and the devshim package
  std::filesystem::path logs_dir;  ///< <out>/logs
  std::string python;              ///< overrides suite.python when non-empty
  /// OMP_NUM_THREADS of each test process where neither the runner's environment nor suite.env
  /// sets it (threads_per_process); 0: not set.
  int threads = 0;
};

/// One test process, fully described.
struct ProcessSpec {
  std::vector<std::string> argv;  ///< argv[0] is resolved to an absolute path when possible
  /// The child's environment: base_env's entries, then these (added or replacing); all of it
  /// when base_env is null.
  Environment env;
  /// Entries many specs share (a run's planned files share one copy: 100,000 copies of an
  /// environment would take most of a gigabyte).
  std::shared_ptr<const Environment> base_env;
  std::filesystem::path cwd;         ///< the project root
  std::filesystem::path log_path;    ///< stdout+stderr, truncated before the start
  std::filesystem::path junit_path;  ///< pytest's --junitxml / GoogleTest's --gtest_output=xml
                                     ///< target; empty for unittest
  /// A warm start's file that imports everything its zygote preloads: while the zygote is still
  /// starting it waits for it (a cold start would import the same); the others start cold.
  bool waits_for_warm = false;
  /// The suite's locks this file holds (Suite::locks): while one of them is held by a running
  /// process, the pool starts other files first.
  std::vector<std::string> locks;
};

/// The intra-op threads each of `jobs` test processes at once gets on a machine of `cores`
/// logical cores: cores / jobs, at least 1. torch (and OpenBLAS, MKL) start one thread per core
/// in every process, so `jobs` processes would run jobs x cores threads and each waits for the
/// others' (captum's files at -j 2 on 2 cores: 2.5 times slower; bench_thread_cap).
int threads_per_process(int jobs, unsigned cores);

/// The environment of a test process: inherited, then suite.env, then OMP_NUM_THREADS =
/// options.threads unless either of them set it, then (shim mode)
/// ACTIVATE_TORCH_DEVICE=1 and PYTORCH_ENABLE_MPS_FALLBACK=1, PYTHONUNBUFFERED=1 (so a crash loses
/// no output), PYTHONFAULTHANDLER=1 (a crash prints where it happened) and PYTHONPATH = [shim dir,]
/// suite.pythonpath..., suite.env's PYTHONPATH, inherited PYTHONPATH. In baseline mode
/// ACTIVATE_TORCH_DEVICE is removed and the shim dir is not on PYTHONPATH. For gtest suites,
/// GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX are removed (plan_process sets them per shard).
Environment child_environment(const Suite& suite, const LaunchOptions& options,
                              const Environment& inherited);

/// What activating the interpreter's environment gives a shell (`source <venv>/bin/activate`,
/// `conda activate`), for an interpreter inside a virtual environment (pyvenv.cfg in the folder
/// above the interpreter's) or a conda environment (conda-meta there): the interpreter's folder
/// first on PATH, VIRTUAL_ENV (venv) or CONDA_PREFIX (conda) naming the environment, PYTHONHOME
/// removed. Test suites run the console scripts their project installs by name (`litgpt ...`,
/// `accelerate launch ...`), as in the activated environment of their own CI. Any other
/// interpreter leaves `env` as it is. The path is taken as given, not resolved: a venv's python is
/// a link to the interpreter it was made from.
void activate_interpreter_environment(Environment& env, const std::filesystem::path& interpreter);

/// argv for one file: `<python> -m unittest -v <path>` or `<python> -m pytest -v -ra
/// --junitxml=<xml> -o junit_family=xunit1 -p no:cacheprovider <args...> <path>`; the path is
/// relative to the project root (the child's cwd). gtest: `<absolute path of the binary>
/// --gtest_output=xml:<xml> <args...>` (python unused).
std::vector<std::string> test_command(const Suite& suite, const std::string& python,
                                      const TestFile& file,
                                      const std::filesystem::path& junit_path);

/// The full spec for one file, holding the suite's locks that match its path. Log:
/// <logs_dir>/<rel_path>.log; junit (pytest, gtest): <logs_dir>/<rel_path>.xml. A gtest shard
/// ("x_test [shard 2 of 4]") logs to <logs_dir>/x_test.shard-2-of-4.log and .xml, and runs with
/// GTEST_TOTAL_SHARDS=4 and GTEST_SHARD_INDEX=1; an unsharded gtest binary runs without either
/// variable (an inherited one would make it run a part of its tests only).
ProcessSpec plan_process(const Suite& suite, const LaunchOptions& options, const Environment& env,
                         const TestFile& file);

/// Why this platform has no warm start (docs/architecture.md#warm-start-on-macos); empty where it
/// has one. On macOS every test file starts cold: a child forked from a process that has loaded
/// torch may not use the system's frameworks (Metal for MPS, Accelerate, CoreFoundation).
std::string_view warm_start_refusal();

/// Finds an executable the way execvp would (a name with '/' is returned as is). Empty if absent.
std::string find_executable(const std::string& name, const Environment& env);

}  // namespace devshim
