#include "runner/results/status.h"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace devshim {

namespace {
constexpr std::array<std::pair<FileStatus, std::string_view>, 7> kFileStatusNames{{
    {FileStatus::kPassed, "passed"},
    {FileStatus::kFailed, "failed"},
    {FileStatus::kError, "error"},
    {FileStatus::kTimeout, "timeout"},
    {FileStatus::kCrashed, "crashed"},
    {FileStatus::kNoTests, "no_tests"},
    {FileStatus::kInterrupted, "interrupted"},
}};
}  // namespace

std::string counts_text(const std::map<std::string, int>& counts) {
  std::string s;
  for (const auto& [status, n] : counts) {
    if (n > 0) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", n, status);
  }
  return s;
}

std::string_view to_string(FileStatus s) {
  for (const auto& [status, name] : kFileStatusNames) {
    if (status == s) return name;
  }
  return "?";
}

std::optional<FileStatus> parse_file_status(std::string_view s) {
  for (const auto& [status, name] : kFileStatusNames) {
    if (name == s) return status;
  }
  return std::nullopt;
}

bool is_failure(FileStatus s) {
  return s == FileStatus::kFailed || s == FileStatus::kError || s == FileStatus::kTimeout ||
         s == FileStatus::kCrashed;
}

}  // namespace devshim
