// --fail-on: which findings make a run (or a merged run) exit 1 (docs/cli.md, "Exit codes").
#pragma once

#include <optional>
#include <string>

#include "reports/report.h"

namespace devshim {

enum class FailOn {
  kAny,          ///< a file failed, errored, timed out or crashed (the default)
  kNewFailures,  ///< a test is new_failure or lost against the previous run (flaky ones are
                 ///< not)
  kRegressions,  ///< a differential regression (baseline passes, shim fails) or a lost test
                 ///< (the baseline reports it, the shim run does not); no baseline: like
                 ///< kNewFailures
};

/// "any", "new-failures", "regressions"; nullopt for anything else.
std::optional<FailOn> parse_fail_on(const std::string& text);

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

}  // namespace devshim
