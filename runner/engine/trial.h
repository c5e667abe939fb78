// --try-settings: where the action of a gap-log entry is a documented shim setting (docs/gaps.md,
// "What to do"), its affected tests run again with that setting, and the entry records how many
// of them it turned into passes (docs/cli.md, "Trying the suggested settings").
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "runner/engine/command_runner.h"
#include "runner/engine/discovery.h"
#include "runner/engine/launch_plan.h"
#include "runner/engine/process_pool.h"
#include "runner/engine/run_events.h"
#include "runner/engine/suite.h"

namespace devshim {

class Store;
class RunLog;

/// What a trial runs the tests of: the run's suite, launch options, environment, files (its
/// planned files), pool (its jobs, timeout) and output folder.
struct TrialPlan {
  const Suite& suite;
  const LaunchOptions& launch;
  const Environment& env;
  const std::vector<TestFile>& files;
  PoolOptions pool;
  std::filesystem::path out_dir;
};

/// For each setting ("VARIABLE=value") that the entries of run_id's gap log name
/// (GapEntry::setting), runs those entries' affected tests again through processes, with the
/// setting added to the environment: each file once, its affected tests alone where the
/// framework can name them (rerun_selectors), cold (a warm parent imported torch under the run's
/// settings), logs under <out_dir>/trials/<VARIABLE>=<value>/. Then each entry records how many
/// of its tests passed (GapLog::record_trial); each trial's start and end go to events and the run
/// log. Returns
/// false when a signal interrupted a trial (nothing of that trial is recorded).
bool try_settings(const TrialPlan& plan, Store& store, std::int64_t run_id, RunLog& log,
                  CommandRunner& processes, RunSink& events);

}  // namespace devshim
