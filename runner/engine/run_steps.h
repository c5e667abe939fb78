// A run of a suite as three steps over plain values (docs/architecture.md, "Data flow"):
//   plan_run     what will run, where and how; validates every input and starts nothing
//   execute_run  the runs row, the test processes (through a CommandRunner), their results
//                recorded as they finish (waiting out a locked database), the reruns
//   finish_run   counts read back from the store, the environment, the run's status, the gap
//                log, the closing lines and the reports; the exit code
// run_suite (runner/engine/run_suite.h) chains them; the tests chain them with fakes of the
// services.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/engine/command_runner.h"
#include "runner/engine/discovery.h"
#include "runner/engine/launch_plan.h"
#include "runner/engine/process_pool.h"
#include "runner/engine/resume.h"
#include "runner/engine/run_events.h"
#include "runner/engine/run_log.h"
#include "runner/engine/run_probes.h"
#include "runner/engine/run_suite.h"
#include "runner/engine/suite.h"
#include "runner/results/store.h"

namespace devshim {

/// What a run needs from outside itself: processes, probes, and where its events go.
struct RunServices {
  CommandRunner& processes;
  RunProbes& probes;
  RunSink& events;
};

/// Everything a run will do, decided before anything starts.
struct RunPlan {
  RunOptions options;  ///< as given; a resumed run's own targets, mode and folder applied
  Suite suite;
  std::unique_ptr<Store> store;            ///< the results database, open
  std::unique_ptr<RunLog> log;             ///< <out>/run.log (appended to when resuming)
  std::optional<ResumePlan> resume;        ///< set for --resume
  std::vector<TestFile> files;             ///< the files to run now, in start order
  LaunchOptions launch;                    ///< python: the interpreter's absolute path, when found
  std::shared_ptr<const Environment> env;  ///< the test processes' environment
  std::string interpreter;         ///< absolute; empty for a GoogleTest suite with no Python
  std::vector<ProcessSpec> specs;  ///< one per file of `files`, in the same order
  RunRecord run;                   ///< the runs row to begin (resume: the recorded row)
  PoolOptions pool;                ///< jobs, timeout, kill grace, log size limit
  std::filesystem::path out_dir;   ///< created, writable
  std::chrono::steady_clock::time_point started;  ///< when planning began
  double discovery_s = 0;                         ///< how long finding the files took
  std::map<std::string, double> expected_s;  ///< files' recorded durations; empty: none recorded
};

/// Plans a run of options.suite: loads and validates the suite, the resumed run, targets, shard,
/// interpreter and shim folder; creates the output folder and run.log; opens the store; resolves
/// --previous; orders the files (recorded durations, --failed-first, the shard's share); plans
/// one process per file. Starts no process and no thread. Throws UsageError (exit 2) for bad
/// input before the output folder exists, Interrupted after a signal (nothing is recorded).
RunPlan plan_run(const RunOptions& options);

/// What execute_run did.
struct RunExecution {
  std::int64_t run_id = 0;
  bool completed = false;    ///< false: a signal interrupted the run (what finished is recorded)
  std::string git_toplevel;  ///< the checkout's root, for upstream links
  std::future<nlohmann::json> environment;  ///< RunProbes::start_environment's result
  /// How its files started (stored as runs.environment's "start"): {"mode": "warm", "preloaded",
  /// "ready_s"} or {"mode": "cold", "why"}; null when no file ran.
  nlohmann::json start;
  /// The processes the run used (RunServices::processes), for finish_run's trials.
  CommandRunner* processes = nullptr;
  /// Where the run's events go (RunServices::events), for finish_run.
  RunSink* events = nullptr;
};

/// Begins (or claims, when resuming) the run's row, starts the environment probes, runs the
/// planned processes through services.processes and records each file as it finishes. A
/// database locked past its busy timeout keeps results in memory and is tried again; still
/// locked after three more tries: sql::BusyError naming the resume command. Then the reruns of
/// --rerun-failures (a resumed run's earlier failures included).
RunExecution execute_run(RunPlan& plan, RunServices services);

/// Ends the run: the whole run's counts read from the store, the environment stored, the run's
/// status (passed, failed, interrupted), the gap log (a failure there is reported, not thrown),
/// with --try-settings the trials of the settings its entries name (runner/engine/trial.h), the
/// closing lines, options.on_recorded (the reports). A signal caught at any moment before the
/// end of the reports makes the run interrupted. Returns the exit code: 0 passed, 1 failed,
/// 128 + the signal when interrupted (130 when no signal was caught: a CommandRunner said so).
int finish_run(RunPlan& plan, RunExecution& execution);

}  // namespace devshim
