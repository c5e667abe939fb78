#include "runner/engine/command_runner.h"

namespace devshim {

PoolCommandRunner::PoolCommandRunner() = default;

PoolCommandRunner::~PoolCommandRunner() = default;

void PoolCommandRunner::prepare() {
  if (!reaper_) reaper_ = std::make_unique<ProcessReaper>();
}

bool PoolCommandRunner::run(const std::vector<ProcessSpec>& specs, const PoolOptions& options,
                            PoolObserver& observer) {
  prepare();
  PoolOptions with_reaper = options;
  with_reaper.reaper = reaper_.get();
  return ProcessPool(with_reaper).run(specs, observer);
}

}  // namespace devshim
