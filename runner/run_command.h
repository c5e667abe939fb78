// `runner SUITE_DIR [TARGET ...]`: plan, launch, record (docs/cli.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace devshim {

class Store;

struct RunOptions {
  std::filesystem::path suite;                   ///< SUITE_DIR or its suite.json
  std::vector<std::string> targets;              ///< files/folders relative to the tests folder
  std::optional<std::filesystem::path> out_dir;  ///< default: default_out_root()/<suite>/<stamp>
  std::optional<std::filesystem::path> db_path;  ///< default: default_db_path()
  int jobs = 0;                                  ///< 0: number of cores
  std::optional<double> timeout_s;               ///< default: suite.json's timeout_s
  double kill_grace_s = 5;
  bool shim = true;                               ///< false with --no-shim
  std::string python;                             ///< overrides suite.json's python
  std::optional<std::filesystem::path> shim_dir;  ///< default: default_shim_dir()
  double max_log_mb = 1024;                       ///< per-process file size limit; 0: none
  std::int64_t baseline_run = 0;  ///< --differential: the baseline run compared with
  bool list_only = false;         ///< --list: print the planned files, run nothing
  std::int64_t previous_run = 0;  ///< --previous: the run compared with; 0: latest comparable
  int rerun_failures = 0;         ///< --rerun-failures N: rerun failing files up to N times
  bool failed_first = false;      ///< --failed-first: the previous run's failing files first
  std::string shard;              ///< --shard I/N; empty: from the environment (schedule.h)
  int shard_total = 0;            ///< --shard-total N, with JOB_COMPLETION_INDEX
  std::string resume;  ///< --resume RUN: finish that interrupted run (runner/resume.h); empty: no
  std::vector<std::string> command_line;  ///< argv of the runner, stored with the run
  /// Called once the run is recorded (interrupted runs included), before the closing lines;
  /// returns the files it wrote (the reports), which the closing lines list.
  std::function<std::vector<std::filesystem::path>(Store&, std::int64_t run_id,
                                                   const std::filesystem::path& out_dir)>
      on_recorded;
};

/// Runs a suite and returns the process exit code (0, 1 or 130). Throws UsageError (exit 2)
/// before anything runs for bad input: suite file, targets, interpreter, shim dir, out dir.
int run_suite(const RunOptions& options);

/// $DEVSHIM_DB, else $XDG_DATA_HOME/devshim/results.db, else ~/.local/share/devshim/results.db.
std::filesystem::path default_db_path();
/// $DEVSHIM_OUT, else ./devshim-out.
std::filesystem::path default_out_root();
/// $DEVSHIM_SHIM_DIR, else the shim/python folder of the source tree this runner was built from.
std::filesystem::path default_shim_dir();

}  // namespace devshim
