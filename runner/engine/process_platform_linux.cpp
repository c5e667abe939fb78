#include <sys/prctl.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <vector>

#include "runner/engine/process_platform.h"

namespace devshim {

namespace {

class LinuxPlatform final : public ProcessPlatform {
 public:
  const char* name() const override { return "linux"; }
  bool adopts_orphans() const override { return true; }
  void become_subreaper() const override { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
  void die_with_parent() const override { ::prctl(PR_SET_PDEATHSIG, SIGKILL); }
  std::vector<pid_t> sweep_candidates() const override {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
      std::ifstream in(task.path() / "children");
      for (pid_t pid = 0; in >> pid;) out.push_back(pid);
    }
    return out;
  }
};

}  // namespace

const ProcessPlatform& linux_platform() {
  static const LinuxPlatform platform;
  return platform;
}

}  // namespace devshim
