// `runner SUITE_DIR [TARGET ...]`: plan, launch, record (docs/cli.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/engine/environment.h"
#include "runner/engine/run_events.h"
#include "runner/engine/suite.h"

namespace devshim {

class Store;

struct RunOptions {
  /// The runner's environment (runner/engine/environment.h): what the test processes inherit, and
  /// where the defaults below, the shard and the suite's project_root_env are read.
  Environment environment;
  std::filesystem::path suite;  ///< SUITE_DIR or its suite.json
  /// The suite already opened (`runner PATH` of a project: runner/engine/suite_source.h); unset:
  /// load_suite(suite).
  std::optional<Suite> opened_suite;
  std::vector<std::string> targets;  ///< files/folders relative to the tests folder
  /// default: default_out_root(environment)/<suite>/<stamp>
  std::optional<std::filesystem::path> out_dir;
  std::optional<std::filesystem::path> db_path;  ///< default: default_db_path(environment)
  int jobs = 0;                                  ///< 0: number of cores
  std::optional<double> timeout_s;               ///< default: suite.json's timeout_s
  double kill_grace_s = 5;
  bool shim = true;  ///< false with --no-shim
  /// Python suites: fork each test file from a warm parent (runner/engine/zygote.h); false with
  /// --cold.
  bool warm = true;
  std::string python;                             ///< overrides suite.json's python
  std::optional<std::filesystem::path> shim_dir;  ///< default: default_shim_dir(environment)
  double max_log_mb = 1024;                       ///< largest log of a file; 0: none
  std::int64_t baseline_run = 0;  ///< the baseline run a shim run is compared with; 0: none
  bool list_only = false;         ///< --list: report the planned files (FilesListed), run nothing
  /// Whether the run says (a notice) that its reports have no upstream links for want of a commit
  /// (missing_links_note); run_differential's baseline leaves it to the shim run, said once.
  bool say_missing_links = true;
  std::string previous;    ///< --previous RUN (an id or "latest"); empty: latest comparable
  int rerun_failures = 0;  ///< --rerun-failures N: rerun failing files up to N times
  /// --continue-after-crash N: run a file cut short (crashed, or a test ended its session) again
  /// without the tests it reported, up to N times (runner/engine/continuation.h); 0: never.
  int continue_after_crash = 10;
  /// --try-settings: rerun the tests of gap-log entries whose action is a documented shim setting
  /// with that setting (runner/engine/trial.h); shim runs only.
  bool try_settings = false;
  bool failed_first = false;  ///< --failed-first: the previous run's failing files first
  std::string shard;          ///< --shard I/N; empty: from the environment (schedule.h)
  int shard_total = 0;        ///< --shard-total N, with JOB_COMPLETION_INDEX
  /// --resume RUN: finish that interrupted run (runner/engine/resume.h); empty: no
  std::string resume;
  /// With resume: the run options given on the command line ("targets", "--no-shim", "--out",
  /// "--shard", "--shard-total"); each must equal what the resumed run recorded (plan_run).
  std::set<std::string> given;
  /// Off a terminal: a "still running" line per file each this many seconds; 0: none.
  int heartbeat_s = 300;
  std::vector<std::string> command_line;  ///< argv of the runner, stored with the run
  /// Called once the run is recorded (interrupted runs included), before the closing lines;
  /// returns the files it wrote (the reports), which the closing lines list.
  std::function<std::vector<std::filesystem::path>(Store&, std::int64_t run_id,
                                                   const std::filesystem::path& out_dir)>
      on_recorded;
};

struct RunServices;

/// The suite a run runs: options.opened_suite, else the suite file options.suite names.
Suite suite_of(const RunOptions& options);

/// A run's processes and probes, owned together: the system's (system_services) or a test's.
class ServiceSet {
 public:
  virtual ~ServiceSet() = default;
  /// The services with events as the run's sink.
  virtual RunServices get(RunSink& events) = 0;
};

/// The real services: processes through ProcessPool (with the reaper, PoolCommandRunner), probes
/// as processes (SystemProbes). runner_env: the runner's environment (git runs with it).
std::unique_ptr<ServiceSet> system_services(const Environment& runner_env);

/// Runs a suite and returns the process exit code (0, 1 or 130): plan_run, execute_run and
/// finish_run (runner/engine/run_steps.h) with services' processes and probes, its events to
/// services' sink; --list reports the planned files instead. Throws UsageError (exit 2) before
/// anything runs for bad input: suite file, targets, interpreter, shim dir, out dir, run
/// references.
int run_suite(const RunOptions& options, RunServices services);

/// What run_differential did: the exit code of the last run made, and both runs' ids (0 for a
/// run not made: the baseline given by reference is not made again; an interrupted baseline
/// makes no shim run).
struct DifferentialRun {
  int exit_code = 0;
  std::int64_t baseline_run = 0;
  std::int64_t shim_run = 0;
};

/// --differential / --baseline: the suite without the shim (into <out>/baseline when options
/// name an output folder; no reruns; its own previous run), then with it, compared with that
/// baseline. baseline: a recorded --no-shim run (an id or "latest") to compare with instead of
/// running one; empty: run one. Throws UsageError when options.shim is false or the named run ran
/// with the shim.
DifferentialRun run_differential(const RunOptions& options, const std::string& baseline,
                                 RunServices services);

/// The project's results folder: the nearest .devshim/ holding results.db, from the current
/// folder up to the root (./run.sh keeps the checkout's results there); nullopt when none.
std::optional<std::filesystem::path> project_results_dir();
/// env's DEVSHIM_DB, else the project's .devshim/results.db (project_results_dir), else
/// $XDG_DATA_HOME/devshim/results.db, else $HOME/.local/share/devshim/results.db.
std::filesystem::path default_db_path(const Environment& env);
/// env's DEVSHIM_OUT, else the project's .devshim/runs (project_results_dir), else ./devshim-out.
std::filesystem::path default_out_root(const Environment& env);

}  // namespace devshim
