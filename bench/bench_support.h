// Process and file helpers shared by the benchmarks that launch the runner and Python files
// (runner_makespan_bench, schedule_makespan_bench, cli_startup_bench), and the suite of sleeping
// files the two makespan benchmarks generate.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace devshim::bench {

namespace fs = std::filesystem;

/// Thrown when a measurement cannot be taken; main() prints it and exits 1.
struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// How to start one process: argv[0] must be a path (no PATH lookup happens here).
struct Command {
  std::vector<std::string> argv;
  fs::path cwd;
  std::vector<std::string> env;  ///< "KEY=VALUE" entries, exactly the child's environment
  fs::path output;               ///< stdout and stderr go here (truncated first); stdin = /dev/null
};

/// How it ended and how long it took, fork to reaped exit.
struct Outcome {
  int exit_code = -1;  ///< -1 when killed by a signal
  int signal = 0;      ///< the terminating signal, 0 when it exited
  double seconds = 0;
  double own_cpu_seconds = 0;  ///< user + system time of the process alone; -1 if unknown
  long max_rss_kib = 0;  ///< peak resident memory of the process (and of children it waited for)
};

/// A started process (spawn) and when it started.
struct Started {
  pid_t pid = -1;
  std::chrono::steady_clock::time_point start;
};

/// Starts `c` without waiting. Throws BenchError if fork fails.
Started spawn(const Command& c);
/// Waits for a process of spawn() and returns how it ended. Throws BenchError if waiting fails.
Outcome wait_for(const Started& p);
/// spawn() then wait_for().
Outcome spawn_and_wait(const Command& c);

/// The last `max_chars` characters of a file, for error messages.
std::string tail_of(const fs::path& file, std::size_t max_chars = 2000);

/// Throws BenchError naming `what` unless the process exited 0.
void require_success(const Outcome& o, const std::string& what, const fs::path& output);

/// The environment the runner gives a test file with --no-shim and a suite without
/// pythonpath/env: the inherited one, PYTHONUNBUFFERED=1, without ACTIVATE_TORCH_DEVICE and
/// PYTHONSTARTUP, with PYTHONFAULTHANDLER=1. Direct launches use it too so that both sides start
/// the interpreter the same way.
std::vector<std::string> baseline_environment();

/// What the runner adds in shim mode (docs/shim.md): ACTIVATE_TORCH_DEVICE=1,
/// PYTORCH_ENABLE_MPS_FALLBACK=1, `shim_dir` first on PYTHONPATH.
std::vector<std::string> shim_environment(std::vector<std::string> env, const fs::path& shim_dir);

/// `name` if it holds a '/', else the first executable `name` in PATH; "" if none.
std::string find_executable(const std::string& name);

/// Writes text to path (truncating). Throws BenchError on failure.
void write_file(const fs::path& path, const std::string& text);

/// A fresh folder $TMPDIR/<prefix>-XXXXXX (or under /tmp). Throws BenchError if it cannot be made.
fs::path make_temp_dir(const std::string& prefix);

/// A generated unittest suite: its folder and its test files' paths relative to it, in the sorted
/// order the runner discovers (and starts) them.
struct GeneratedSuite {
  fs::path dir;
  std::vector<std::string> files;  ///< "tests/test_NN.py"
};

/// Writes DIR/suite.json (suite `name`, unittest, `python`, a 120 s timeout) and
/// DIR/tests/test_NN.py, file i one test that sleeps sleeps[i] seconds and passes.
GeneratedSuite write_sleep_suite(const fs::path& dir, const std::string& name,
                                 const std::string& python, const std::vector<double>& sleeps);

/// What a benchmark launches with: the runner, the suites' interpreter, the environment
/// (baseline_environment()) and its temporary folder (suites, logs, databases).
struct Tools {
  std::string runner;
  std::string python;
  std::vector<std::string> env;
  fs::path work;
};

/// Launches each file of `suite` directly, one after another, the way the runner would
/// (`PYTHON -m unittest -v FILE`, logs under WORK/direct-logs); returns each file's wall-clock
/// duration. Throws BenchError if one does not pass.
std::vector<double> run_directly(const Tools& t, const GeneratedSuite& suite);

/// As run_directly, with the environment `env`; each file's outcome. In shim mode (`record`) each
/// file writes its redirection record beside its log, as under the runner.
std::vector<Outcome> launch_directly(const Tools& t, const GeneratedSuite& suite,
                                     const std::vector<std::string>& env, bool record);

}  // namespace devshim::bench
