// `runner import`: TorchDevice run_transformer_tests.py logs (a sample layout made for the tests:
// an overall <series>_<timestamp>.log and <project>/<path>.py.log per file).
#include <gtest/gtest.h>

#include "runner/error.h"
#include "runner/import_command.h"
#include "runner/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;
using testing::write_file;

TEST(ParseFinishedLine, ReadsModuleStatusReturnCodeAndDuration) {
  auto f = parse_finished_line(
      "2025-05-01 10:00:03 - INFO - Finished test: tests/utils/test_x.py - Status: FAILED "
      "(RC: 1) Duration: 12.50s");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->module, "tests/utils/test_x.py");
  EXPECT_EQ(f->status, FileStatus::kFailed);
  EXPECT_EQ(f->return_code, 1);
  EXPECT_DOUBLE_EQ(f->duration_s, 12.5);
  EXPECT_EQ(parse_finished_line("Finished test: tests.a - Status: timed out (RC: -9) Duration: 1s")
                ->status,
            FileStatus::kTimeout);
  EXPECT_EQ(parse_finished_line("Finished test: x - Status: Passed")->status, FileStatus::kPassed);
  EXPECT_FALSE(parse_finished_line("Started test: x"));
}

TEST(ImportLogs, AnOverallLogAndPerFileLogsBecomeOneRun) {
  TempDir dir;
  write_file(dir / "logs/transformers_20250501_100000.log",
             "2025-05-01 10:00:00 - INFO - Starting test series\n"
             "2025-05-01 10:00:01 - INFO - Finished test: tests/utils/test_a.py - Status: PASSED "
             "(RC: 0) Duration: 1.00s\n"
             "2025-05-01 10:00:03 - INFO - Finished test: tests.utils.test_b - Status: FAILED "
             "(RC: 1) Duration: 2.00s\n"
             "2025-05-01 10:00:09 - INFO - Finished test: tests/utils/test_c.py - Status: TIMEOUT "
             "(RC: -9) Duration: 600.00s\n");
  write_file(dir / "logs/transformers/tests/utils/test_a.py.log",
             "test_one (tests.utils.test_a.T.test_one) ... ok\n\n"
             "----------------------------------------------------------------------\n"
             "Ran 1 test in 0.001s\n\nOK\n");
  write_file(dir / "logs/transformers/tests/utils/test_b.py.log",
             "test_two (tests.utils.test_b.T.test_two) ... FAIL\n\n"
             "======================================================================\n"
             "FAIL: test_two (tests.utils.test_b.T.test_two)\n"
             "----------------------------------------------------------------------\n"
             "Traceback (most recent call last):\n"
             "  File \"/src/transformers/tests/utils/test_b.py\", line 9, in test_two\n"
             "    self.assertLessEqual(0.79, 1e-05)\n"
             "AssertionError: 0.79 not less than or equal to 1e-05\n\n"
             "----------------------------------------------------------------------\n"
             "Ran 1 test in 0.001s\n\nFAILED (failures=1)\n");
  ASSERT_EQ(import_logs(dir / "logs", dir / "r.db", ""), 0);

  Store store(dir / "r.db");
  auto run = store.runs(1).at(0);
  EXPECT_EQ(run.suite, "transformers");
  EXPECT_EQ(run.status, "failed");
  auto files = store.files(run.id);
  ASSERT_EQ(files.size(), 3U);
  EXPECT_EQ(files[0].path, "tests/utils/test_a.py");
  EXPECT_EQ(files[0].status, FileStatus::kPassed);
  EXPECT_EQ(files[1].path, "tests/utils/test_b.py");
  EXPECT_EQ(files[1].log_path, "transformers/tests/utils/test_b.py.log");
  EXPECT_EQ(files[2].status, FileStatus::kTimeout);
  auto cases = store.cases(run.id);
  ASSERT_EQ(cases.size(), 2U);
  EXPECT_EQ(cases[1].test.status, CaseStatus::kFailed);
  EXPECT_EQ(cases[1].test.message, "0.79 not less than or equal to 1e-05");
  EXPECT_EQ(cases[1].test.source.line, 9);
}

TEST(ImportLogs, AFolderWithoutAnOverallLogIsAUsageError) {
  TempDir dir;
  write_file(dir / "logs/readme.txt", "");
  EXPECT_THROW(import_logs(dir / "logs", dir / "r.db", ""), UsageError);
  EXPECT_THROW(import_logs(dir / "nope", dir / "r.db", ""), UsageError);
}

}  // namespace
}  // namespace devshim
