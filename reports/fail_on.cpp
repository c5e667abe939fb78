#include "reports/fail_on.h"

#include <fmt/format.h>

#include "runner/base/error.h"

namespace devshim {

namespace {

// The tests that fail now and did not before, and those lost since: what new-failures counts.
int new_failures(const ReportPrevious& previous) {
  int n = 0;
  for (const char* cls : {"new_failure", "lost"}) {
    if (auto it = previous.counts.find(cls); it != previous.counts.end()) n += it->second;
  }
  return n;
}

}  // namespace

std::optional<FailOn> parse_fail_on(const std::string& text) {
  if (text == "any") return FailOn::kAny;
  if (text == "new-failures") return FailOn::kNewFailures;
  if (text == "regressions") return FailOn::kRegressions;
  return std::nullopt;
}

int fail_on_exit_code(FailOn policy, const Report& report, int exit_code) {
  if (exit_code != kExitOk && exit_code != kExitFailures) return exit_code;
  if (policy == FailOn::kRegressions && report.differential) {
    const ReportDifferential& d = *report.differential;
    if (!d.regressions.empty() || !d.lost.empty()) return kExitFailures;
    return d.baseline_passed == 0 ? exit_code : kExitOk;  // nothing compared: the run's own
  }
  if (policy == FailOn::kAny || !report.previous) return exit_code;
  return new_failures(*report.previous) > 0 ? kExitFailures : kExitOk;
}

std::string fail_on_reason(FailOn policy, const Report& report, int exit_code) {
  if (policy == FailOn::kAny || (exit_code != kExitOk && exit_code != kExitFailures)) return "";
  const int result = fail_on_exit_code(policy, report, exit_code);
  if (policy == FailOn::kRegressions && report.differential) {
    const std::size_t n = report.differential->regressions.size();
    const std::size_t lost = report.differential->lost.size();
    if (n == 0 && lost == 0 && report.differential->baseline_passed == 0) {
      return fmt::format(
          "--fail-on regressions: nothing compared (baseline run {} passed no test), so the "
          "run's own exit {}",
          report.differential->baseline_run, result);
    }
    const std::string found =
        lost > 0 ? fmt::format("{} failing and {} lost test{} (missing from this run)", n, lost,
                               lost == 1 ? "" : "s")
        : n == 0 ? std::string("no regression")
                 : fmt::format("{} regression{}", n, n == 1 ? "" : "s");
    return fmt::format("--fail-on regressions: {} against baseline run {}, so exit {}", found,
                       report.differential->baseline_run, result);
  }
  const char* option = policy == FailOn::kRegressions
                           ? "--fail-on regressions (no baseline: new failures)"
                           : "--fail-on new-failures";
  if (!report.previous) {
    return fmt::format("{}: no previous run to compare with, so every failure is new: exit {}",
                       option, result);
  }
  const int n = new_failures(*report.previous);
  return fmt::format("{}: {} that did not in run {}, so exit {}", option,
                     n == 0
                         ? std::string("no test fails")
                         : fmt::format("{} test{} fail{}", n, n == 1 ? "" : "s", n == 1 ? "s" : ""),
                     report.previous->previous_run, result);
}

}  // namespace devshim
