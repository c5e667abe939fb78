#include "runner/results/status.h"

#include <gtest/gtest.h>

namespace devshim {
namespace {

TEST(FileStatusNames, RoundTripAndFailureSet) {
  for (auto s : {FileStatus::kPassed, FileStatus::kFailed, FileStatus::kError, FileStatus::kTimeout,
                 FileStatus::kCrashed, FileStatus::kNoTests, FileStatus::kInterrupted}) {
    EXPECT_EQ(parse_file_status(to_string(s)), s);
  }
  EXPECT_EQ(to_string(FileStatus::kNoTests), "no_tests");
  EXPECT_FALSE(parse_file_status("weird"));
  EXPECT_TRUE(is_failure(FileStatus::kTimeout));
  EXPECT_FALSE(is_failure(FileStatus::kNoTests));
  EXPECT_FALSE(is_failure(FileStatus::kInterrupted));
}

TEST(CountsText, NonzeroCountsInAlphabeticalOrder) {
  EXPECT_EQ(counts_text({{"passed", 1}, {"failed", 12}, {"error", 0}}), "12 failed, 1 passed");
  EXPECT_EQ(counts_text({{"passed", 13}}), "13 passed");
  EXPECT_EQ(counts_text({}), "");
  EXPECT_EQ(counts_text({{"skipped", 0}}), "");
}

}  // namespace
}  // namespace devshim
