#include <vector>

#include "runner/engine/process_platform.h"
#include "runner/engine/process_table.h"

namespace devshim {

namespace {

class PosixPlatform final : public ProcessPlatform {
 public:
  const char* name() const override { return "posix"; }
  bool adopts_orphans() const override { return false; }
  void become_subreaper() const override {}
  void die_with_parent() const override {}
  std::vector<pid_t> sweep_candidates() const override {
    std::vector<pid_t> out;
    process_table::for_each_process(
        [](pid_t pid, void* context) { static_cast<std::vector<pid_t>*>(context)->push_back(pid); },
        &out);
    return out;
  }
};

}  // namespace

const ProcessPlatform& posix_platform() {
  static const PosixPlatform platform;
  return platform;
}

}  // namespace devshim
