// The sanitizer build (DEVSHIM_SANITIZE=ON) catches what it is there to catch: each deliberate bug
// of sanitizer_canary is reported and ends the program with exit code 86, with no ASAN_OPTIONS or
// UBSAN_OPTIONS set (the defaults compiled into each executable hold). Without this, a build that
// silently lost its instrumentation would pass every other test.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "tests/support/test_support.h"

namespace devshim {
namespace {

devshim::testing::RunResult canary(const std::string& mode) {
  return devshim::testing::run({SANITIZER_CANARY_PATH, mode},
                               {{"ASAN_OPTIONS", ""}, {"UBSAN_OPTIONS", ""}});
}

TEST(SanitizerBuildTest, ACleanProgramExitsZero) {
  const auto r = canary("clean");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("survived clean"), std::string::npos) << r.output;
}

struct Bug {
  const char* mode;
  const char* report;
};

class SanitizerCatches : public ::testing::TestWithParam<Bug> {};

TEST_P(SanitizerCatches, TheBugWithExitCode86) {
  const auto r = canary(GetParam().mode);
  EXPECT_EQ(r.exit_code, 86) << r.output;
  EXPECT_NE(r.output.find(GetParam().report), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("survived"), std::string::npos) << r.output;
}

void PrintTo(const Bug& b, std::ostream* os) { *os << b.mode; }

INSTANTIATE_TEST_SUITE_P(
    Canary, SanitizerCatches,
    ::testing::Values(Bug{"heap-buffer-overflow", "AddressSanitizer: heap-buffer-overflow"},
                      Bug{"use-after-free", "AddressSanitizer: heap-use-after-free"},
                      Bug{"signed-overflow", "runtime error: signed integer overflow"},
                      Bug{"leak", "LeakSanitizer: detected memory leaks"}),
    [](const ::testing::TestParamInfo<Bug>& info) {
      std::string name;
      for (const char* c = info.param.mode; *c != '\0'; ++c) name += *c == '-' ? '_' : *c;
      return name;
    });

}  // namespace
}  // namespace devshim
