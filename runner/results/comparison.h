// Any two recorded runs compared test by test (`runner compare A B`): what changed between two
// nights, two shim policies, two torch versions or two machines. Tests are matched by file, class
// name and test name, and parameterized cases that B numbers otherwise as a differential run
// matches them (renumbering_aligned).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parsers/test_result.h"
#include "runner/results/store.h"

namespace devshim {

/// The comparison classes in the order `runner compare` lists them, each with its meaning:
/// regressed (passed in A, fails in B), cuda_branch_failed (passed in A, a run without the shim
/// that saw no CUDA, and fails in B on a CUDA branch: ran_cuda_branch; not a regression), lost (in
/// A, missing from B: counted as a regression, as a differential run's lost tests are), fixed
/// (failed in A, passes in B), newly_skipped (ran in A, or absent, and skips in B), newly_run
/// (skipped or absent in A, runs in B), renumbered (a parameterized case of a group B has more or
/// fewer cases of than A: no one case of A to compare it with; A's cases of that group are not
/// lost), same (the same outcome both times). xfailed and xpassed count as passes, error as a
/// failure.
const std::vector<std::pair<std::string, std::string>>& comparison_classes();

/// The class of one test from its status in run A and in run B (nullopt: absent there; not both).
/// cuda_branch: B did device work on a CUDA path that A could not take (a failure is then
/// cuda_branch_failed, not regressed).
std::string comparison_class(std::optional<CaseStatus> a, std::optional<CaseStatus> b,
                             bool cuda_branch = false);

/// One test that is in A or in B, with its statuses ("absent" where it is not) and B's message
/// (A's for a test that is lost).
struct ComparedTest {
  std::string file, classname, name, status_a, status_b, message;
  SourceLocation source;  ///< B's (A's for a test that is lost)
};

struct RunComparison {
  RunRecord a, b;
  std::map<std::string, int> counts;                       ///< class → tests (every class)
  std::map<std::string, std::vector<ComparedTest>> tests;  ///< class → tests, but not "same"
  /// How many of the renumbered tests must be regressions (RunResultStatuses::
  /// renumbered_regressions, B taken as the run whose groups grew): counted with regressed and
  /// lost.
  int renumbered_regressions = 0;
};

/// How many tests of class cls the comparison counts (0 for a class it does not name).
int comparison_count(const RunComparison& c, const std::string& cls);

/// regressed + lost + renumbered_regressions.
int comparison_regressions(const RunComparison& c);

/// Compares run b with run a. Reads both runs' cases from store.
RunComparison compare_runs(Store& store, const RunRecord& a, const RunRecord& b);

}  // namespace devshim
