// `runner prune`: deletes old runs and their output (logs, reports) together (docs/cli.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runner/results/store.h"

namespace devshim {

struct PruneOptions {
  std::filesystem::path db;
  int keep = 0;                ///< --keep N: the newest N runs of each suite stay; 0: no limit
  double older_than_days = 0;  ///< --older-than DAYS: runs started before now - DAYS go; 0: any
  std::string suite;           ///< --suite: only this suite's runs
  bool dry_run = false;        ///< --dry-run: print what would go, delete nothing
};

/// The files a run's output folder holds that the runner wrote for it: each file's log, its
/// JUnit XML and redirection record, run.log, the four reports, the warm start's zygote logs and
/// reruns/ (relative to run.out_dir; reruns/ as one folder). Prune adds the against-<id>/
/// folders of `runner report --against`.
std::vector<std::filesystem::path> run_outputs(const std::vector<FileRecord>& files);

/// Deletes the runs that --keep / --older-than select (never a running run, nor the baseline of a
/// run that stays) from the database, then their outputs; folders left empty are removed. A
/// run's outputs stay when a run that stays has the same output folder, and for imported runs
/// (their logs are not the runner's). Prints what it deletes. Throws UsageError when neither
/// keep nor older_than_days is given or the database does not exist.
int prune_command(const PruneOptions& options);

}  // namespace devshim
