// The differential classes of shared/DESIGN.md: a shim run compared with its baseline (shim off)
// run, test by test. Used by the reports (counts, regressions) and by the gap log (newly skipped
// tests), so it lives below both.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parsers/test_result.h"
#include "runner/results/store.h"

namespace devshim {

/// The differential classes in the order reports list them, each with its meaning:
/// compatible (pass/pass), regression (pass → fail), unlocked (skip or fail → pass),
/// broken_both (fail or skip → fail), skipped_both (skip or fail → skip), newly_skipped
/// (pass → skip).
const std::vector<std::pair<std::string, std::string>>& differential_classes();

/// The class of one test from its status in the baseline run (nullopt: absent, which counts as a
/// failure there) and under the shim. xfailed and xpassed count as passes.
std::string diff_class(std::optional<CaseStatus> baseline, CaseStatus shim);

/// Whether a skip's reason says the test runs only where there is no GPU (accelerate's
/// `@require_cpu`: "test requires only a CPU"; "CPU only", "no GPU", "CUDA is available", ...).
/// Such a test skips under the shim because the CUDA masquerade says a GPU is there: an expected
/// effect of the masquerade, not a test the shim lost. Case-insensitive.
bool skip_wants_no_gpu(std::string_view reason);

/// Every test's status in one run (a differential run's baseline), read without the tests'
/// texts (Store::result_statuses), to look the same tests of another run of the same store up
/// by file and test (its class name and test name: StoredCase::test_id).
class RunStatuses {
 public:
  RunStatuses() = default;  ///< no run: every lookup is nullopt
  RunStatuses(Store& store, std::int64_t run_id);
  /// The test's status in the run; nullopt when the run does not have it.
  std::optional<CaseStatus> find(const StoredCase& test) const;

 private:
  std::map<std::pair<std::string, std::int64_t>, CaseStatus> by_test_;
};

}  // namespace devshim
