// collect_results: file status from parsed results plus how the process ended.
#include "runner/engine/collect.h"

#include <gtest/gtest.h>

#include <csignal>

#include "tests/support/test_support.h"

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
  // A log past --max-log-mb: crashed whether the runner killed it or it exited first.
  ProcessResult flooded = exited(0);
  flooded.log_too_big = true;
  EXPECT_EQ(status_from_process(flooded, Framework::kPytest), FileStatus::kCrashed);
  ProcessResult launch;
  launch.launch_error = "cannot start";
  EXPECT_EQ(status_from_process(launch, Framework::kPytest), FileStatus::kError);
}

using testing::TempDir;
using testing::write_file;

class CollectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    suite_.name = "t";
    suite_.project_root = dir_.path();
    suite_.framework = Framework::kUnittest;
    write_file(dir_ / "tests/test_x.py",
               "import unittest\n\nclass A(unittest.TestCase):\n    def test_ok(self):\n"
               "        pass\n\n    def test_crash(self):\n        pass\n");
    spec_.log_path = dir_ / "test_x.py.log";
  }
  CollectedFile collect(const std::string& log, ProcessResult r) {
    write_file(spec_.log_path, log);
    return collect_results(suite_, file_, spec_, r);
  }
  static ProcessResult exited(int code) {
    ProcessResult r;
    r.exit_code = code;
    return r;
  }
  TempDir dir_;
  Suite suite_;
  TestFile file_{"test_x.py", ""};
  ProcessSpec spec_;
};

constexpr const char* kPassing =
    "test_ok (tests.test_x.A.test_ok) ... ok\n\n"
    "----------------------------------------------------------------------\n"
    "Ran 1 test in 0.000s\n\nOK\n";

TEST_F(CollectTest, ACleanRunPasses) {
  CollectedFile c = collect(kPassing, exited(0));
  EXPECT_EQ(c.status, FileStatus::kPassed);
  EXPECT_EQ(c.parsed_from, "log");
  ASSERT_EQ(c.cases.size(), 1U);
  EXPECT_EQ(c.reported.ran, 1);
}

TEST_F(CollectTest, NoTestsWhenNothingRan) {
  EXPECT_EQ(collect("\n-----------------------------------------------------------------------\n"
                    "Ran 0 tests in 0.000s\n\nOK\n",
                    exited(0))
                .status,
            FileStatus::kNoTests);
  EXPECT_EQ(collect("NO TESTS RAN\n", exited(5)).status, FileStatus::kNoTests);
}

TEST_F(CollectTest, AnImportFailureIsAnError) {
  CollectedFile c = collect(
      "test_x (unittest.loader._FailedTest.test_x) ... ERROR\n\n"
      "======================================================================\n"
      "ERROR: test_x (unittest.loader._FailedTest.test_x)\n"
      "----------------------------------------------------------------------\n"
      "ImportError: Failed to import test module: test_x\nTraceback (most recent call last):\n"
      "  File \"/p/tests/test_x.py\", line 1, in <module>\n    import nope\n"
      "ModuleNotFoundError: No module named 'nope'\n\n\n"
      "----------------------------------------------------------------------\n"
      "Ran 1 test in 0.000s\n\nFAILED (errors=1)\n",
      exited(1));
  EXPECT_EQ(c.status, FileStatus::kError);
  EXPECT_TRUE(c.import_error);
}

TEST_F(CollectTest, ACrashKeepsFinishedTestsAndNamesTheCulpritAtItsDefLine) {
  ProcessResult r;
  r.signal = SIGSEGV;
  CollectedFile c = collect(
      "test_ok (tests.test_x.A.test_ok) ... ok\ntest_crash (tests.test_x.A.test_crash) ... ", r);
  EXPECT_EQ(c.status, FileStatus::kCrashed);
  ASSERT_EQ(c.cases.size(), 2U);
  EXPECT_EQ(c.cases[0].status, CaseStatus::kPassed);
  const TestCase& culprit = c.cases[1];
  EXPECT_EQ(culprit.name, "test_crash");
  EXPECT_EQ(culprit.status, CaseStatus::kError);
  EXPECT_EQ(culprit.culprit, "crashed");
  EXPECT_EQ(culprit.message, "process killed by SIGSEGV");
  EXPECT_EQ(culprit.source.path, "tests/test_x.py");
  EXPECT_EQ(culprit.source.line, 7);
}

TEST_F(CollectTest, ATimeoutNamesItsCulprit) {
  ProcessResult r;
  r.signal = SIGTERM;
  r.timed_out = true;
  r.duration_s = 30;
  CollectedFile c = collect("test_crash (tests.test_x.A.test_crash) ... ", r);
  EXPECT_EQ(c.status, FileStatus::kTimeout);
  ASSERT_EQ(c.cases.size(), 1U);
  EXPECT_EQ(c.cases[0].culprit, "timeout");
  EXPECT_EQ(c.cases[0].exception, "Timeout");
}

TEST_F(CollectTest, AMissingLogStillGivesAStatus) {
  std::filesystem::remove(spec_.log_path);
  CollectedFile c = collect_results(suite_, file_, spec_, exited(1));
  EXPECT_EQ(c.status, FileStatus::kError);
  EXPECT_TRUE(c.parsed_from.empty());
}

// pytest's paths from a rootdir above the project root (tests/runner/fixtures/rootdir_above: the
// bundled suite in the checkout, whose pyproject.toml pytest took for the rootdir) are the project
// root's again: a link made of one must open the test file.
TEST(CollectRootdirAbove, SourcePathsAreTheProjectRootsAgain) {
  const std::filesystem::path fixtures =
      std::filesystem::path(RUNNER_FIXTURES_DIR) / "rootdir_above";
  Suite suite;
  suite.name = "cuda-idioms";
  suite.project_root = std::filesystem::path(DEVSHIM_SOURCE_DIR) / "suites" / "cuda-idioms";
  suite.tests_dir = "tests";
  suite.framework = Framework::kPytest;
  const TestFile file{"test_amp.py", {}};
  ProcessSpec spec;
  spec.log_path = fixtures / "test_amp.py.log";
  spec.junit_path = fixtures / "test_amp.py.xml";
  const CollectedFile c = collect_results(suite, file, spec, exited(1));
  EXPECT_EQ(c.status, FileStatus::kFailed);
  int failed = 0;
  for (const TestCase& t : c.cases) {
    if (t.status != CaseStatus::kFailed) continue;
    ++failed;
    EXPECT_EQ(t.source.path, "tests/test_amp.py") << t.name;
    EXPECT_GT(t.source.line, 0) << t.name;
  }
  EXPECT_EQ(failed, 11);
}

}  // namespace
}  // namespace devshim
