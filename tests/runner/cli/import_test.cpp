// `runner import`: TorchDevice run_transformer_tests.py logs: the ones its runner really wrote
// (tests/runner/fixtures/torchdevice/, README there) and the layout devshim read first (an
// overall <series>_<timestamp>.log and <project>/tests/<path>.py.log per file).
#include <gtest/gtest.h>

#include <map>

#include "base/error.h"
#include "runner/cli/import_command.h"
#include "runner/engine/resume.h"
#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;
using testing::write_file;

// The logs TorchDevice's runner wrote for tests/runner/fixtures/torchdevice/project/minisuite
// (issue 17: every file was recorded with no tests, every duration 0).
TEST(ImportLogs, ReadsWhatTorchDevicesRunnerWrote) {
  TempDir dir;
  const std::filesystem::path logs =
      std::filesystem::path(RUNNER_FIXTURES_DIR) / "torchdevice/logs";
  ASSERT_EQ(import_logs(logs, dir / "r.db", ""), 0);

  Store store(dir / "r.db");
  auto run = store.runs(1).at(0);
  EXPECT_EQ(run.suite, "minisuite");  // the project's folder, not the series "utils"
  EXPECT_EQ(run.status, "failed");
  std::map<std::string, FileRecord> files;
  for (auto& f : store.files(run.id)) files[f.path] = f;
  ASSERT_EQ(files.size(), 5U);
  for (const auto& [path, f] : files) {
    EXPECT_EQ(f.parsed_from, "log") << path;
    EXPECT_GT(f.duration_s, 5) << path;  // each took about 10 s (TorchDevice's start-up)
  }
  const FileRecord& b = files.at("tests/utils/test_b.py");
  EXPECT_EQ(b.status, FileStatus::kFailed);
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_DOUBLE_EQ(b.duration_s, 10.122613);
  EXPECT_EQ(b.log_path, "minisuite/utils/test_b.py.log");
  ASSERT_TRUE(b.reported.present);
  EXPECT_EQ(b.reported.ran, 6);
  EXPECT_EQ(files.at("tests/utils/test_import_error.py").status, FileStatus::kError);
  EXPECT_EQ(files.at("tests/models/test_linear.py").status, FileStatus::kFailed);
  EXPECT_EQ(files.at("tests/test_tensors.py").status, FileStatus::kPassed);
  EXPECT_EQ(files.at("tests/test_tensors.py").log_path, "minisuite/test_tensors.py.log");
  const FileRecord& crash = files.at("tests/models/test_crash.py");
  EXPECT_EQ(crash.status, FileStatus::kCrashed);
  EXPECT_EQ(crash.signal, 11);
  EXPECT_FALSE(crash.exit_code);

  std::map<std::string, StoredCase> cases;
  for (auto& c : store.cases(run.id)) cases[c.test.classname + "." + c.test.name] = c;
  // test_b 6, test_import_error 1, test_linear 2, test_crash 2 (one the culprit), test_tensors 4.
  EXPECT_EQ(cases.size(), 15U);
  const TestCase& loss = cases.at("tests.utils.test_b.ToleranceTest.test_loss_small").test;
  EXPECT_EQ(loss.status, CaseStatus::kFailed);
  EXPECT_EQ(loss.message, "0.79 not less than or equal to 1e-05");
  EXPECT_EQ(loss.source.path, "tests/utils/test_b.py");
  EXPECT_EQ(loss.source.line, 11);
  // Its verdict came after TorchDevice's own lines.
  EXPECT_EQ(cases.at("tests.utils.test_b.ToleranceTest.test_stream").test.status,
            CaseStatus::kPassed);
  EXPECT_EQ(cases.at("tests.utils.test_b.SkipTest.test_skip_inside").test.status,
            CaseStatus::kSkipped);
  EXPECT_EQ(cases.at("tests.test_tensors.TensorTest.test_known_bad").test.status,
            CaseStatus::kXfailed);
  EXPECT_EQ(cases.at("tests.models.test_linear.LinearTest.test_seed").test.status,
            CaseStatus::kFailed);
  const TestCase& culprit = cases.at("tests.models.test_crash.CrashTest.test_segfault").test;
  EXPECT_EQ(culprit.status, CaseStatus::kError);
  EXPECT_EQ(culprit.culprit, "crashed");
  EXPECT_EQ(cases.at("unittest.loader._FailedTest.test_import_error").test.exception,
            "ImportError");
}

// TorchDevice's runner stopped by Ctrl-C while tests/test_slow.py ran (fixtures/torchdevice/
// interrupted, README there): no Finished line and no trailer for that file, no summary, and a
// third file that never started. Its "Log file:" lines are absolute (--log_dir outside
// TorchDevice).
TEST(ImportLogs, ARunStoppedByCtrlCIsInterrupted) {
  TempDir dir;
  const std::filesystem::path logs =
      std::filesystem::path(RUNNER_FIXTURES_DIR) / "torchdevice/interrupted";
  ASSERT_EQ(import_logs(logs, dir / "r.db", ""), 0);

  Store store(dir / "r.db");
  auto run = store.runs(1).at(0);
  EXPECT_EQ(run.suite, "slowsuite");
  EXPECT_EQ(run.status, "interrupted");
  std::map<std::string, FileRecord> files;
  for (auto& f : store.files(run.id)) files[f.path] = f;
  ASSERT_EQ(files.size(), 3U);
  EXPECT_EQ(files.at("tests/test_fast.py").status, FileStatus::kPassed);
  EXPECT_DOUBLE_EQ(files.at("tests/test_fast.py").duration_s, 2.987409);
  EXPECT_EQ(files.at("tests/test_fast.py").log_path, "slowsuite/test_fast.py.log");
  const FileRecord& slow = files.at("tests/test_slow.py");
  EXPECT_EQ(slow.status, FileStatus::kInterrupted);
  EXPECT_EQ(slow.log_path, "slowsuite/test_slow.py.log");
  EXPECT_FALSE(files.at("tests/test_never.py").status);  // never started: not run

  std::map<std::string, StoredCase> cases;
  for (auto& c : store.cases(run.id)) cases[c.test.classname + "." + c.test.name] = c;
  EXPECT_EQ(cases.size(), 3U);
  EXPECT_EQ(cases.at("tests.test_slow.SlowTest.test_quick").test.status, CaseStatus::kPassed);
  const TestCase& culprit = cases.at("tests.test_slow.SlowTest.test_waits").test;
  EXPECT_EQ(culprit.status, CaseStatus::kError);
  EXPECT_EQ(culprit.culprit, "interrupted");

  // --resume would run a suite's files into TorchDevice's log folder: refused.
  Suite suite;
  suite.name = "slowsuite";
  EXPECT_THROW(plan_resume(store, suite, std::to_string(run.id)), UsageError);
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
