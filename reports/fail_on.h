// --fail-on: which findings make a run (or a merged run) exit 1 (docs/cli.md, "Exit codes").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/report.h"

namespace devshim {

enum class FailOn {
  kAny,          ///< a file failed, errored, timed out or crashed (the default)
  kNewFailures,  ///< a test is new_failure or lost against the previous run (flaky ones are
                 ///< not)
  kRegressions,  ///< a differential regression (baseline passes, shim fails, on code that ran
                 ///< both ways) or a lost test (the baseline reports it, the shim run does
                 ///< not); no baseline: like kNewFailures
  /// a CUDA-branch failure (baseline passes, shim fails on a CUDA path the baseline could not
  /// take: cuda_branch_failed); no baseline: none (exit 0)
  kCudaBranchFailures,
};

/// --fail-on's value: the policies it names, each of which can make the exit code 1.
using FailOnList = std::vector<FailOn>;

/// One policy's name: "any", "new-failures", "regressions", "cuda-branch-failures"; nullopt for
/// anything else.
std::optional<FailOn> parse_fail_on(const std::string& text);

/// A comma-separated list of policies ("regressions,cuda-branch-failures"), in the given order
/// without repeats; nullopt when a name is unknown or the list is empty.
std::optional<FailOnList> parse_fail_on_list(const std::string& text);

/// The policies' names, as --fail-on's help lists them.
inline constexpr const char* kFailOnNames = "any, new-failures, regressions, cuda-branch-failures";

/// The exit code of a finished run under policy: 130 stays 130 (interrupted) and codes other
/// than 0 and 1 pass through; kAny keeps exit_code; kNewFailures is 1 when the report has a
/// previous run and a new_failure or a lost test, and exit_code when it has no previous run
/// (every failure is new then); kRegressions is 1 when the report's differential lists a
/// regression or a lost test, and falls back to kNewFailures when the run has no baseline.
int fail_on_exit_code(FailOn policy, const Report& report, int exit_code);

/// Why fail_on_exit_code gave what it gave, for the line the runner prints after "run N failed"
/// ("--fail-on new-failures: no test fails that did not in run 6, so exit 0"); empty for kAny
/// and for codes the policy does not judge (2, 130, ...).
std::string fail_on_reason(FailOn policy, const Report& report, int exit_code);

/// Every policy of a list judged: 1 when any of them gives 1, else the first one's code (codes
/// other than 0 and 1 pass through).
int fail_on_exit_code(const FailOnList& policies, const Report& report, int exit_code);
/// The reasons of a list's policies (fail_on_reason), in its order, empty ones left out.
std::vector<std::string> fail_on_reasons(const FailOnList& policies, const Report& report,
                                         int exit_code);

}  // namespace devshim
