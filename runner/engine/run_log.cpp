#include "runner/engine/run_log.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/printable.h"
#include "runner/results/store.h"

namespace devshim {

RunLog::RunLog(const std::filesystem::path& path, bool append) {
  file_ = std::fopen(path.c_str(), append ? "ae" : "we");
  if (file_ == nullptr) {
    throw RuntimeError(
        fmt::format("{}: cannot write run log: {}", path.string(), std::strerror(errno)));
  }
  std::setvbuf(file_, nullptr, _IOLBF, 1 << 16);
}

RunLog::~RunLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void RunLog::line(const std::string& message) {
  fmt::print(file_, "{} {}\n", iso8601_utc_now(), printable(message));
  std::fflush(file_);
}

}  // namespace devshim
