#include "runner/engine/command_runner.h"

#include <fmt/format.h>

#include "base/error.h"
#include "runner/engine/interrupt.h"
#include "runner/engine/process_platform.h"
#include "runner/engine/process_reaper.h"
#include "runner/engine/zygote.h"

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
  with_reaper.children = reaper_.get();
  with_reaper.warm_parent = nullptr;
  if (options.warm && !specs.empty() && interrupt_signal() == 0 &&
      !process_platform().adopts_orphans()) {
    // The zygote's children are forked twice: the runner waits for them only as their adopter.
    observer.on_warm_start(std::nullopt, fmt::format("the {} process platform cannot adopt the "
                                                     "warm parent's children",
                                                     process_platform().name()));
  } else if (options.warm && !specs.empty() && interrupt_signal() == 0) {
    if (zygote_ && zygote_->state() == Zygote::State::kFailed) {
      zygote_failed_ = zygote_->options();
      zygote_error_ = zygote_->why();
      zygote_.reset();
    }
    if (zygote_ && !(zygote_->options() == *options.warm)) zygote_.reset();
    if (!zygote_ && !(zygote_failed_ && *zygote_failed_ == *options.warm)) {
      try {
        observer.on_warm_starting(*options.warm);
        zygote_ = std::make_unique<Zygote>(*options.warm);  // the pool hears when it is ready
      } catch (const Error& e) {
        zygote_failed_ = options.warm;
        zygote_error_ = e.what();
      }
    }
    with_reaper.warm_parent = zygote_.get();
    if (!zygote_) observer.on_warm_start(std::nullopt, zygote_error_);
  }
  return ProcessPool(with_reaper).run(specs, observer);
}

}  // namespace devshim
