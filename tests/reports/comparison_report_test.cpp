// Two runs compared test by test on a real database (runner/results/comparison.h) and rendered
// (reports/comparison_report.h): renumbered cases, the verdict of --fail-on, the text. `runner
// compare` itself: tests/runner/cli/compare_command_test.cpp.
#include "reports/comparison_report.h"

#include <gtest/gtest.h>

#include "tests/reports/report_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using S = CaseStatus;
using testing::TempDir;

// A shim run numbers parameterized cases otherwise than its baseline: a group with as many cases
// is compared in order, one that grew or shrank is counted as renumbered (its baseline cases are
// not lost) with the regressions its counts prove, which --fail-on regressions counts.
TEST(CompareRenumbered, CasesAreMatchedAsInADifferentialRun) {
  TempDir dir;
  Store store(dir.path() / "results.db");
  const std::int64_t a = testing::record_compared_run(store, "default",
                                                      {{"test_eq_0", S::kPassed},
                                                       {"test_eq_1", S::kPassed},
                                                       {"test_grow_0", S::kPassed},
                                                       {"test_grow_1", S::kPassed},
                                                       {"test_cut_0", S::kPassed},
                                                       {"test_cut_1", S::kPassed},
                                                       {"test_cut_2", S::kPassed}});
  // test_eq_* renumbered with as many cases; test_grow_* grew from 2 cases to 4, of which 1 does
  // not fail: at least 2 passing in A - 1 = 1 regression; test_cut_* lost a case (B stopped
  // early): 3 passing in A - 2 = 1 regression.
  const std::int64_t b = testing::record_compared_run(store, "default",
                                                      {{"test_eq_00", S::kPassed},
                                                       {"test_eq_01", S::kFailed},
                                                       {"test_grow_0", S::kPassed},
                                                       {"test_grow_1", S::kFailed},
                                                       {"test_grow_2", S::kFailed},
                                                       {"test_grow_3", S::kFailed},
                                                       {"test_cut_00", S::kPassed},
                                                       {"test_cut_01", S::kPassed}});
  const RunComparison c = compare_runs(store, *store.run(a), *store.run(b));
  EXPECT_EQ(c.counts.at("same"), 1) << "test_eq_0 and test_eq_00";
  ASSERT_EQ(c.tests.count("regressed"), 1U);
  ASSERT_EQ(c.tests.at("regressed").size(), 1U);
  EXPECT_EQ(c.tests.at("regressed")[0].name, "test_eq_01");
  EXPECT_EQ(c.tests.at("regressed")[0].status_a, "passed");
  EXPECT_EQ(c.counts.at("lost"), 0) << "test_grow_0 and _1 of A are in the renumbered group";
  EXPECT_EQ(c.counts.at("newly_run"), 0);
  EXPECT_EQ(c.counts.at("renumbered"), 6);
  EXPECT_EQ(c.tests.at("renumbered")[0].status_a, "renumbered");
  EXPECT_EQ(c.renumbered_regressions, 2);
  EXPECT_EQ(comparison_regressions(c), 3);

  const ComparisonVerdict v = comparison_verdict(FailOn::kRegressions, c);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_NE(v.reason.find("3 regressions (1 regressed, 0 lost, at least 2 renumbered)"),
            std::string::npos)
      << v.reason;
  ComparisonReport report;
  report.comparison = c;
  const std::string text = render_comparison_text(report);
  EXPECT_NE(text.find("regressions         3  regressed + lost + at least 2 renumbered"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("6 tests of B are parameterized cases numbered otherwise"), std::string::npos)
      << text;
  EXPECT_NE(text.find("At least 2 of them are regressions"), std::string::npos) << text;
}

}  // namespace
}  // namespace devshim
