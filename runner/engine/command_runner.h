// The seam between a run's logic and real processes (in the manner of ninja's CommandRunner):
// plan, rerun and record code hands its ProcessSpecs to a CommandRunner; the runner starts them
// with ProcessPool, the tests' fake writes captured real logs instead.
#pragma once

#include <memory>
#include <vector>

#include "runner/engine/launch_plan.h"
#include "runner/engine/process_pool.h"

namespace devshim {
class ProcessReaper;
class Zygote;
}  // namespace devshim

namespace devshim {

/// Runs one batch of test processes. The contract is ProcessPool::run's
/// (runner/engine/process_pool.h): specs start in the order given, at most options.jobs at once;
/// observer's callbacks come on the calling thread; the result is false when a signal interrupted
/// the batch, true when every spec ran. options.children and options.warm_parent are the
/// implementation's business: callers leave them null.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  /// Called once by a run before it starts any thread of its own (the probes): an
  /// implementation that forks does its forking here. run() calls it when nobody has.
  virtual void prepare() {}
  virtual bool run(const std::vector<ProcessSpec>& specs, const PoolOptions& options,
                   PoolObserver& observer) = 0;
};

/// Real processes through ProcessPool, with a ProcessReaper watching every batch, so no process
/// of a test outlives it (runner/engine/process_reaper.h). prepare() forks the reaper's watchdog,
/// which must happen while the runner has no other thread. With PoolOptions::warm, on a process
/// platform that adopts orphans (runner/engine/process_platform.h; elsewhere every file starts
/// cold, and the observer hears why through on_warm_start), the first run() starts a zygote
/// (runner/engine/zygote.h) without waiting for it (the pool starts files cold until it is ready),
/// which later runs with the same options (reruns) share; other options replace it.
class PoolCommandRunner final : public CommandRunner {
 public:
  PoolCommandRunner();
  ~PoolCommandRunner() override;
  PoolCommandRunner(const PoolCommandRunner&) = delete;
  PoolCommandRunner& operator=(const PoolCommandRunner&) = delete;
  void prepare() override;
  bool run(const std::vector<ProcessSpec>& specs, const PoolOptions& options,
           PoolObserver& observer) override;

 private:
  std::unique_ptr<ProcessReaper> reaper_;
  std::unique_ptr<Zygote> zygote_;
  std::optional<WarmStartOptions> zygote_failed_;  ///< options a zygote could not start with
  std::string zygote_error_;
};

}  // namespace devshim
