// The observer of a run's main pass: it records each finished file in the store as it finishes
// (its cases, its redirection record, the tests that took a CUDA path), writes run.log's lines,
// reports the file to the run's progress, and keeps how the files started (warm or cold).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/engine/process_pool.h"
#include "runner/engine/run_events.h"
#include "runner/engine/run_steps.h"
#include "runner/results/store.h"

namespace devshim {

class RunObserver final : public PoolObserver {
 public:
  RunObserver(const RunPlan& plan, std::int64_t run_id, FileProgress& progress, RunSink& events)
      : plan_(plan), run_id_(run_id), progress_(progress), events_(events) {}

  void on_start(std::size_t i) override;
  void on_finish(std::size_t i, const ProcessResult& r) override;
  void on_warm_starting(const WarmStartOptions& options) override;
  void on_warm_start(const std::optional<WarmReady>& ready, const std::string& why) override;
  void on_cold_start(std::size_t i, const std::string& why) override;
  void on_tick() override;
  void on_interrupt(int signo) override;

  /// How the run's files started (runs.environment's "start"): {"mode": "warm", "preloaded",
  /// "ready_s"} (with "cold_files" when files started cold while the zygote was starting) or
  /// {"mode": "cold", "why"}; null when a warm start was asked for and no file ran.
  nlohmann::json start() const;

  /// Records the finished files not recorded yet, oldest first. A database locked past its busy
  /// timeout keeps them waiting in memory (false); the next file or tick tries again.
  bool flush();
  std::size_t unrecorded() const { return pending_.size(); }
  /// Whether a file of this session failed.
  bool any_failure() const { return any_failure_; }

 private:
  const RunPlan& plan_;
  std::int64_t run_id_;
  FileProgress& progress_;
  RunSink& events_;
  struct Pending {
    FileRecord file;
    std::vector<TestCase> cases;
    std::vector<Redirection> redirections;
  };
  std::deque<Pending> pending_;
  bool warned_locked_ = false;
  bool any_failure_ = false;
  bool said_cold_ = false;
  nlohmann::json start_;
  std::size_t warm_files_ = 0;  ///< forked from the zygote
  std::size_t cold_files_ = 0;  ///< started cold (before it was ready, or without it)
};

}  // namespace devshim
