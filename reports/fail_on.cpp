#include "reports/fail_on.h"

#include <fmt/format.h>

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

std::string fail_on_reason(FailOn policy, const Report& report, int exit_code) {
  if (policy == FailOn::kAny || (exit_code != kExitOk && exit_code != kExitFailures)) return "";
  const int result = fail_on_exit_code(policy, report, exit_code);
  if (policy == FailOn::kRegressions && report.differential) {
    const std::size_t n = report.differential->regressions.size();
    return fmt::format("--fail-on regressions: {} against baseline run {}, so exit {}",
                       n == 0 ? std::string("no regression")
                              : fmt::format("{} regression{}", n, n == 1 ? "" : "s"),
                       report.differential->baseline_run, result);
  }
  const char* option = policy == FailOn::kRegressions
                           ? "--fail-on regressions (no baseline: new failures)"
                           : "--fail-on new-failures";
  if (!report.previous) {
    return fmt::format("{}: no previous run to compare with, so every failure is new: exit {}",
                       option, result);
  }
  auto it = report.previous->counts.find("new_failure");
  const int n = it == report.previous->counts.end() ? 0 : it->second;
  return fmt::format("{}: {} that did not in run {}, so exit {}", option,
                     n == 0
                         ? std::string("no test fails")
                         : fmt::format("{} test{} fail{}", n, n == 1 ? "" : "s", n == 1 ? "s" : ""),
                     report.previous->previous_run, result);
}

}  // namespace devshim
