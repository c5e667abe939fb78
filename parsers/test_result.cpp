#include "parsers/test_result.h"

#include <array>
#include <utility>

namespace devshim {

namespace {
constexpr std::array<std::pair<CaseStatus, std::string_view>, 6> kCaseStatusNames{{
    {CaseStatus::kPassed, "passed"},
    {CaseStatus::kFailed, "failed"},
    {CaseStatus::kError, "error"},
    {CaseStatus::kSkipped, "skipped"},
    {CaseStatus::kXfailed, "xfailed"},
    {CaseStatus::kXpassed, "xpassed"},
}};
}  // namespace

std::string_view to_string(CaseStatus s) {
  for (const auto& [status, name] : kCaseStatusNames) {
    if (status == s) return name;
  }
  return "?";
}

std::optional<CaseStatus> parse_case_status(std::string_view s) {
  for (const auto& [status, name] : kCaseStatusNames) {
    if (name == s) return status;
  }
  return std::nullopt;
}

bool is_failure(CaseStatus s) { return s == CaseStatus::kFailed || s == CaseStatus::kError; }

}  // namespace devshim
