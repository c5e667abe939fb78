// Which files a run starts, and in what order: duration-aware ordering (longest first from the
// recorded durations, --failed-first) and sharding (--shard, Bazel and Kubernetes conventions).
// Pure functions of the files, the recorded durations and the environment, tested without a
// database or a process (docs/cli.md, "Scheduling and shards").
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/engine/discovery.h"
#include "runner/engine/launch_plan.h"

namespace devshim {

/// One shard of a run: index is 0-based (shard index + 1 of total, "2/4", for people).
struct Shard {
  int index = 0;
  int total = 1;
};

/// "2/4" for index 1 of 4.
std::string shard_text(const Shard& shard);

/// The shard this run is, from (first that applies):
///   1. option, "i/N" with 1 <= i <= N (the --shard option; 1-based);
///   2. Bazel: TEST_TOTAL_SHARDS and TEST_SHARD_INDEX (0-based);
///   3. a Kubernetes Indexed Job: JOB_COMPLETION_INDEX (0-based) with the total from total_option
///      (--shard-total) or DEVSHIM_SHARD_TOTAL.
/// nullopt: the run is not sharded (also for a total of 1). Throws UsageError for a malformed or
/// out-of-range value, naming the option or variable; JOB_COMPLETION_INDEX without a total is an
/// error too.
std::optional<Shard> resolve_shard(const std::string& option, int total_option,
                                   const Environment& env);

/// Expected seconds of each file: its recorded duration, else the median of the recorded
/// durations of the files given (1 when none has one).
std::vector<double> estimate_durations(const std::vector<TestFile>& files,
                                       const std::map<std::string, double>& recorded);

/// The files in the order to start them: those named in first (--failed-first: last run's
/// failures) before the others, each group longest expected duration first; equal estimates keep
/// the order given. With no recorded durations this is the order given.
std::vector<TestFile> order_files(const std::vector<TestFile>& files,
                                  const std::vector<double>& estimates,
                                  const std::set<std::string>& first = {});

/// The names of the locks each file holds (locks_of in discovery.h), one entry per file; entries
/// past its end (all of them when it is empty) hold none.
using FileLocks = std::vector<std::vector<std::string>>;

/// The shard of each file (0-based), balancing expected durations. Files that hold a common lock,
/// directly or through other files (A and B share X, B and C share Y: A, B and C), form one unit
/// that goes to one shard whole, so that no two shards of a plan run holders of one lock at once;
/// every other file is a unit alone. Units are placed longest first by the sum of their files'
/// estimates (equal sums: the unit whose first file comes first in files), each to the shard with
/// the least expected work so far (ties: the lowest index); without locks this is file by file.
/// Deterministic: shards that see the same files, estimates and locks assign them the same way.
std::vector<int> assign_shards(const std::vector<TestFile>& files,
                               const std::vector<double>& estimates, int total,
                               const FileLocks& locks = {});

/// A fingerprint (16 hex digits) of a whole assignment: equal on every shard of one plan, so
/// `runner merge` can tell shards planned from different histories.
std::string shard_plan_fingerprint(const std::vector<TestFile>& files,
                                   const std::vector<int>& assignment);

/// What a run starts: this shard's files (all of them when not sharded) in the order to start
/// them (order_files), and the shard plan's fingerprint (empty when not sharded). Estimates come
/// from recorded (estimate_durations) over all the files, so every shard plans alike; locks are
/// the files' locks (assign_shards), which keep the holders of one lock in one shard.
struct Schedule {
  std::vector<TestFile> files;
  std::string shard_plan;
};
Schedule schedule_files(const std::vector<TestFile>& files,
                        const std::map<std::string, double>& recorded,
                        const std::optional<Shard>& shard, const FileLocks& locks = {},
                        const std::set<std::string>& first = {});

}  // namespace devshim
