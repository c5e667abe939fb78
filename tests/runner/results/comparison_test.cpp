// The comparison class of a test from its outcomes in two runs (runner/results/comparison.h);
// compare_runs and `runner compare` on a real database: tests/runner/cli/compare_command_test.cpp,
// tests/reports/comparison_report_test.cpp.
#include "runner/results/comparison.h"

#include <gtest/gtest.h>

namespace devshim {
namespace {

using S = CaseStatus;

TEST(ComparisonClass, EveryPairOfOutcomes) {
  EXPECT_EQ(comparison_class(S::kPassed, S::kPassed), "same");
  EXPECT_EQ(comparison_class(S::kFailed, S::kError), "same");
  EXPECT_EQ(comparison_class(S::kSkipped, S::kSkipped), "same");
  EXPECT_EQ(comparison_class(S::kXfailed, S::kPassed), "same") << "xfailed is a pass";
  EXPECT_EQ(comparison_class(S::kPassed, S::kFailed), "regressed");
  EXPECT_EQ(comparison_class(S::kXpassed, S::kError), "regressed");
  EXPECT_EQ(comparison_class(S::kError, S::kPassed), "fixed");
  EXPECT_EQ(comparison_class(S::kPassed, S::kSkipped), "newly_skipped");
  EXPECT_EQ(comparison_class(S::kFailed, S::kSkipped), "newly_skipped");
  EXPECT_EQ(comparison_class(std::nullopt, S::kSkipped), "newly_skipped");
  EXPECT_EQ(comparison_class(S::kSkipped, S::kPassed), "newly_run");
  EXPECT_EQ(comparison_class(S::kSkipped, S::kFailed), "newly_run");
  EXPECT_EQ(comparison_class(std::nullopt, S::kFailed), "newly_run");
  EXPECT_EQ(comparison_class(S::kPassed, std::nullopt), "lost");
}

// A test that passed in A and fails in B on a CUDA branch A could not take is no regression.
TEST(ComparisonClass, AFailingCudaBranchIsNotRegressed) {
  EXPECT_EQ(comparison_class(S::kPassed, S::kFailed, true), "cuda_branch_failed");
  EXPECT_EQ(comparison_class(S::kPassed, S::kPassed, true), "same");
  EXPECT_EQ(comparison_class(S::kFailed, S::kFailed, true), "same");
  EXPECT_EQ(comparison_class(S::kFailed, S::kPassed, true), "fixed");
  EXPECT_EQ(comparison_class(std::nullopt, S::kFailed, true), "newly_run");
}

}  // namespace
}  // namespace devshim
