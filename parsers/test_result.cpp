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

bool is_import_error_case(const TestCase& c) {
  return c.name == "<collection>" || c.classname.rfind("unittest.loader.", 0) == 0;
}

std::string failure_text(const TestCase& c) {
  if (c.exception.empty()) return c.message;
  return c.message.empty() ? c.exception : c.exception + ": " + c.message;
}

std::string_view exception_prefix(std::string_view text) {
  const std::size_t colon = text.find(": ");
  if (colon == std::string_view::npos || colon == 0) return {};
  const std::string_view head = text.substr(0, colon);
  const bool is_name = head.find_first_not_of(
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                           "0123456789_.") == std::string_view::npos &&
                       head.front() >= 'A' && head.front() <= 'Z';
  return is_name ? head : std::string_view{};
}

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

int outcome_rank(CaseStatus s) {
  switch (s) {
    case CaseStatus::kPassed:
      return 0;
    case CaseStatus::kSkipped:
      return 1;
    case CaseStatus::kXfailed:
      return 2;
    case CaseStatus::kXpassed:
      return 3;
    case CaseStatus::kError:
      return 4;
    case CaseStatus::kFailed:
      return 5;
  }
  return 0;
}

bool is_failure(CaseStatus s) { return s == CaseStatus::kFailed || s == CaseStatus::kError; }

}  // namespace devshim
