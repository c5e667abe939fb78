// Two tests finish, the third crashes (SIGSEGV), the fourth never runs.
#include <gtest/gtest.h>

#include <csignal>

TEST(Crash, First) {}

TEST(Crash, Second) { EXPECT_TRUE(false); }

TEST(Crash, Third) {
  std::printf("about to crash\n");
  std::fflush(stdout);
  std::raise(SIGSEGV);
}

TEST(Crash, Fourth) {}
