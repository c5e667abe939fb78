// The observer of a pass that runs some of a run's files again after the main pass (the reruns of
// failures, the continuations after a crash): it logs each file's start and end under the pass's
// label, shows them in the progress, and keeps each finished file's process result and results.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runner/engine/collect.h"
#include "runner/engine/discovery.h"
#include "runner/engine/process_pool.h"
#include "runner/engine/run_events.h"
#include "runner/engine/run_log.h"
#include "runner/engine/suite.h"

namespace devshim {

/// How a pass after the main one runs: at most `passes` times (--rerun-failures N,
/// --continue-after-crash N), with the run's pool, under its output folder.
struct FollowUpOptions {
  int passes = 0;
  PoolOptions pool;
  std::filesystem::path out_dir;      ///< the run's output folder
  std::chrono::seconds heartbeat{0};  ///< ProgressPlan::heartbeat
};

class FollowUpObserver : public PoolObserver {
 public:
  struct Finished {
    ProcessResult process;
    CollectedFile collected;
  };

  /// files[i] is what specs[i] runs; label names the pass in the run log ("Rerun (attempt 2)").
  FollowUpObserver(const Suite& suite, std::vector<TestFile> files,
                   const std::vector<ProcessSpec>& specs, RunLog& log, FileProgress& progress,
                   std::string label);

  void on_start(std::size_t i) override;
  void on_finish(std::size_t i, const ProcessResult& r) override;
  void on_tick() override;
  void on_interrupt(int signo) override;
  /// By index into files.
  const std::map<std::size_t, Finished>& finished() const { return finished_; }

 private:
  const Suite& suite_;
  std::vector<TestFile> files_;
  const std::vector<ProcessSpec>& specs_;
  RunLog& log_;
  FileProgress& progress_;
  std::string label_;
  std::map<std::size_t, Finished> finished_;
};

}  // namespace devshim
