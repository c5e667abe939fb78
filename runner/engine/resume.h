// `runner SUITE --resume RUN`: finishing an interrupted run (docs/cli.md, docs/reliability.md).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "runner/engine/discovery.h"
#include "runner/engine/suite.h"
#include "runner/results/store.h"

namespace devshim {

/// An interrupted run and what is left of it.
struct ResumePlan {
  RunRecord run;                     ///< as recorded: suite, targets, mode, shard, out_dir, ...
  std::vector<TestFile> files;       ///< the files to run again, in path order
  std::vector<TestFile> run_files;   ///< every file of the run the suite still has (for reruns)
  std::vector<std::string> missing;  ///< unfinished files the suite no longer has
  std::size_t planned = 0;           ///< files of the whole run
};

/// The run named by run_spec (an id or "latest") and its unfinished files: those with no status
/// (never started, or running when the runner died) or with status "interrupted". There may be
/// none: a runner killed after its last file, before it finished the run, leaves only the
/// finishing to do. Throws UsageError when the run is of another suite, has finished (passed or
/// failed), is still running (its runner is alive, or it runs on another host), or was made by
/// `runner import`.
ResumePlan plan_resume(Store& store, const Suite& suite, const std::string& run_spec);

}  // namespace devshim
