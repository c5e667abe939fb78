#include "runner/engine/follow_up.h"

#include <fmt/format.h>

#include <utility>

#include "runner/engine/process_pool.h"
#include "runner/results/status.h"

namespace devshim {

FollowUpObserver::FollowUpObserver(const Suite& suite, std::vector<TestFile> files,
                                   const std::vector<ProcessSpec>& specs, RunLog& log,
                                   FileProgress& progress, std::string label)
    : suite_(suite),
      files_(std::move(files)),
      specs_(specs),
      log_(log),
      progress_(progress),
      label_(std::move(label)) {}

void FollowUpObserver::on_start(std::size_t i) {
  log_.line(fmt::format("{}: Started test: {}", label_, files_[i].rel_path));
  progress_.started(files_[i].rel_path);
}

void FollowUpObserver::on_finish(std::size_t i, const ProcessResult& r) {
  Finished f{r, collect_results(suite_, files_[i], specs_[i], r)};
  const FileStatus status = f.collected.status;
  log_.line(fmt::format("{}: Finished test: {} - Status: {} Duration: {:.2f}s", label_,
                        files_[i].rel_path, to_string(status), r.duration_s));
  progress_.finished(files_[i].rel_path, status, r.duration_s, specs_[i].log_path.string(), "");
  finished_.emplace(i, std::move(f));
}

void FollowUpObserver::on_tick() { progress_.tick(); }

void FollowUpObserver::on_interrupt(int signo) {
  log_.line(fmt::format("Interrupted by {}: stopping {}", signal_name(signo), label_));
}

}  // namespace devshim
