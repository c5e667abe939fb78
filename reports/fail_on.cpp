#include "reports/fail_on.h"

#include "runner/base/error.h"

namespace devshim {

std::optional<FailOn> parse_fail_on(const std::string& text) {
  if (text == "any") return FailOn::kAny;
  if (text == "new-failures") return FailOn::kNewFailures;
  if (text == "regressions") return FailOn::kRegressions;
  return std::nullopt;
}

int fail_on_exit_code(FailOn policy, const Report& report, int exit_code) {
  if (exit_code != kExitOk && exit_code != kExitFailures) return exit_code;
  if (policy == FailOn::kRegressions && report.differential) {
    return report.differential->regressions.empty() ? kExitOk : kExitFailures;
  }
  if (policy == FailOn::kAny || !report.previous) return exit_code;
  auto it = report.previous->counts.find("new_failure");
  return it != report.previous->counts.end() && it->second > 0 ? kExitFailures : kExitOk;
}

}  // namespace devshim
