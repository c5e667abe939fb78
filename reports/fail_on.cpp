#include "reports/fail_on.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"

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
  if (text == "cuda-branch-failures") return FailOn::kCudaBranchFailures;
  return std::nullopt;
}

std::optional<FailOnList> parse_fail_on_list(const std::string& text) {
  FailOnList out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const auto one = parse_fail_on(text.substr(start, comma - start));
    if (!one) return std::nullopt;
    if (std::find(out.begin(), out.end(), *one) == out.end()) out.push_back(*one);
    start = comma + 1;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

int fail_on_exit_code(const FailOnList& policies, const Report& report, int exit_code) {
  if (exit_code != kExitOk && exit_code != kExitFailures) return exit_code;
  int first = exit_code;
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const int code = fail_on_exit_code(policies[i], report, exit_code);
    if (code == kExitFailures) return code;
    if (i == 0) first = code;
  }
  return first;
}

std::vector<std::string> fail_on_reasons(const FailOnList& policies, const Report& report,
                                         int exit_code) {
  std::vector<std::string> out;
  for (FailOn policy : policies) {
    if (std::string why = fail_on_reason(policy, report, exit_code); !why.empty()) {
      out.push_back(std::move(why));
    }
  }
  return out;
}

int fail_on_exit_code(FailOn policy, const Report& report, int exit_code) {
  if (exit_code != kExitOk && exit_code != kExitFailures) return exit_code;
  if (policy == FailOn::kCudaBranchFailures) {
    return report.differential && !report.differential->cuda_branch_failures.empty() ? kExitFailures
                                                                                     : kExitOk;
  }
  if (policy == FailOn::kRegressions && report.differential) {
    const ReportDifferential& d = *report.differential;
    if (regressions_total(d) > 0) return kExitFailures;
    return d.baseline_passed == 0 ? exit_code : kExitOk;  // nothing compared: the run's own
  }
  if (policy == FailOn::kAny || !report.previous) return exit_code;
  return new_failures(*report.previous) > 0 ? kExitFailures : kExitOk;
}

std::string fail_on_reason(FailOn policy, const Report& report, int exit_code) {
  if (policy == FailOn::kAny || (exit_code != kExitOk && exit_code != kExitFailures)) return "";
  const int result = fail_on_exit_code(policy, report, exit_code);
  if (policy == FailOn::kCudaBranchFailures) {
    if (!report.differential) {
      return fmt::format("--fail-on cuda-branch-failures: no baseline to compare with, so exit {}",
                         result);
    }
    const std::size_t n = report.differential->cuda_branch_failures.size();
    return fmt::format("--fail-on cuda-branch-failures: {} against baseline run {}, so exit {}",
                       n == 0 ? std::string("no CUDA-branch failure")
                              : fmt::format("{} CUDA-branch failure{}", n, n == 1 ? "" : "s"),
                       report.differential->baseline_run, result);
  }
  if (policy == FailOn::kRegressions && report.differential) {
    const ReportDifferential& d = *report.differential;
    const std::size_t n = d.regressions.size();
    const std::size_t lost = d.lost.size();
    if (regressions_total(d) == 0 && d.baseline_passed == 0) {
      return fmt::format(
          "--fail-on regressions: nothing compared (baseline run {} passed no test), so the "
          "run's own exit {}",
          d.baseline_run, result);
    }
    std::string found;
    if (lost == 0 && d.renumbered_regressions == 0) {
      found = n == 0 ? std::string("no regression")
                     : fmt::format("{} regression{}", n, n == 1 ? "" : "s");
    } else {
      std::vector<std::string> parts{fmt::format("{} failing", n)};
      if (lost > 0) {
        parts.push_back(
            fmt::format("{} lost test{} (missing from this run)", lost, lost == 1 ? "" : "s"));
      }
      if (d.renumbered_regressions > 0) {
        parts.push_back(
            fmt::format("at least {} among renumbered cases", d.renumbered_regressions));
      }
      for (std::size_t i = 0; i < parts.size(); ++i) {
        found += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
      }
    }
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
