#include "runner/status.h"

#include <gtest/gtest.h>

#include <csignal>

#include "runner/process_pool.h"
#include "runner/suite.h"

namespace devshim {
namespace {

ProcessResult exited(int code) {
  ProcessResult r;
  r.exit_code = code;
  return r;
}

TEST(StatusFromProcess, MapsHowTheProcessEnded) {
  EXPECT_EQ(status_from_process(exited(0), Framework::kUnittest), FileStatus::kPassed);
  EXPECT_EQ(status_from_process(exited(1), Framework::kUnittest), FileStatus::kFailed);
  EXPECT_EQ(status_from_process(exited(5), Framework::kPytest), FileStatus::kNoTests);
  EXPECT_EQ(status_from_process(exited(2), Framework::kPytest), FileStatus::kError);
  EXPECT_EQ(status_from_process(exited(4), Framework::kPytest), FileStatus::kError);
  EXPECT_EQ(status_from_process(exited(2), Framework::kUnittest), FileStatus::kFailed);
  // GoogleTest gives exit 5 no meaning of its own.
  EXPECT_EQ(status_from_process(exited(5), Framework::kGtest), FileStatus::kFailed);
  EXPECT_EQ(status_from_process(exited(2), Framework::kGtest), FileStatus::kFailed);
  // Exit code 9 is an exit, not a SIGKILL.
  EXPECT_EQ(status_from_process(exited(9), Framework::kUnittest), FileStatus::kFailed);

  ProcessResult crashed;
  crashed.signal = SIGSEGV;
  EXPECT_EQ(status_from_process(crashed, Framework::kPytest), FileStatus::kCrashed);
  ProcessResult timed_out = crashed;
  timed_out.signal = SIGKILL;
  timed_out.timed_out = true;
  EXPECT_EQ(status_from_process(timed_out, Framework::kPytest), FileStatus::kTimeout);
  ProcessResult interrupted = timed_out;
  interrupted.timed_out = false;
  interrupted.interrupted = true;
  EXPECT_EQ(status_from_process(interrupted, Framework::kPytest), FileStatus::kInterrupted);
  ProcessResult launch;
  launch.launch_error = "cannot start";
  EXPECT_EQ(status_from_process(launch, Framework::kPytest), FileStatus::kError);
}

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
