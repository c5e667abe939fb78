#include "runner/results/differential.h"

#include <gtest/gtest.h>

namespace devshim {
namespace {

TEST(DiffClass, EveryCellOfTheDifferentialTable) {
  using S = CaseStatus;
  EXPECT_EQ(diff_class(S::kPassed, S::kPassed), "compatible");
  EXPECT_EQ(diff_class(S::kPassed, S::kFailed), "regression");
  EXPECT_EQ(diff_class(S::kPassed, S::kError), "regression");
  EXPECT_EQ(diff_class(S::kSkipped, S::kPassed), "unlocked");
  EXPECT_EQ(diff_class(S::kFailed, S::kPassed), "unlocked");
  EXPECT_EQ(diff_class(std::nullopt, S::kPassed), "unlocked");
  EXPECT_EQ(diff_class(S::kFailed, S::kFailed), "broken_both");
  EXPECT_EQ(diff_class(S::kSkipped, S::kError), "broken_both");
  EXPECT_EQ(diff_class(S::kSkipped, S::kSkipped), "skipped_both");
  EXPECT_EQ(diff_class(S::kFailed, S::kSkipped), "skipped_both");
  EXPECT_EQ(diff_class(S::kPassed, S::kSkipped), "newly_skipped");
  EXPECT_EQ(diff_class(S::kXfailed, S::kXpassed), "compatible");
}

TEST(SkipWantsNoGpu, TheReasonsOfSkipsWhenAGpuIsThere) {
  // accelerate's require_cpu (src/accelerate/test_utils/testing.py @16cb6eb8), as pytest and
  // unittest report it.
  EXPECT_TRUE(skip_wants_no_gpu("test requires only a CPU"));
  EXPECT_TRUE(skip_wants_no_gpu("Skipped: test requires only a CPU"));
  EXPECT_TRUE(skip_wants_no_gpu("CPU-only test"));
  EXPECT_TRUE(skip_wants_no_gpu("skipped because CUDA is available"));
  // Skips for want of a device, or for other reasons, are not.
  EXPECT_FALSE(skip_wants_no_gpu("test requires a GPU"));
  EXPECT_FALSE(skip_wants_no_gpu("test requires a CUDA GPU or XPU"));
  EXPECT_FALSE(skip_wants_no_gpu("test requires a non-XPU"));
  EXPECT_FALSE(skip_wants_no_gpu("test is slow"));
  EXPECT_FALSE(skip_wants_no_gpu(""));
}

}  // namespace
}  // namespace devshim
