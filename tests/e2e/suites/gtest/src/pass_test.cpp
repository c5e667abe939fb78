// Passing, failing and skipped tests, and a check of the environment the runner gives.
#include <gtest/gtest.h>

#include <cstdlib>

TEST(Basic, Passes) { EXPECT_EQ(2 + 2, 4); }

TEST(Basic, Fails) {
  EXPECT_EQ(2 + 2, 5) << "arithmetic is hard";  // e2e: failing line
}

TEST(Basic, Skips) { GTEST_SKIP() << "nothing to do here"; }

TEST(Environment, ShimIsActivated) {
  const char* v = std::getenv("ACTIVATE_TORCH_DEVICE");
  ASSERT_NE(v, nullptr);
  EXPECT_STREQ(v, "1");
}
