// TorchDevice's run_transformer_tests.py logs (parsers/torchdevice_log.h): "Finished test:" lines,
// durations, the overall log, and finding each file's log among many (`runner import` on real
// logs: tests/runner/cli/import_test.cpp).
#include "parsers/torchdevice_log.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace devshim {
namespace {

TEST(ParseFinishedLine, ReadsModuleStatusReturnCodeAndDuration) {
  auto f = parse_finished_line(
      "2025-05-01 10:00:03 - INFO - Finished test: tests/utils/test_x.py - Status: FAILED "
      "(RC: 1) Duration: 12.50s");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->module, "tests/utils/test_x.py");
  EXPECT_EQ(f->status, TorchDeviceStatus::kFailed);
  EXPECT_EQ(f->return_code, 1);
  EXPECT_DOUBLE_EQ(f->duration_s, 12.5);
  EXPECT_EQ(parse_finished_line("Finished test: tests.a - Status: timed out (RC: -9) Duration: 1s")
                ->status,
            TorchDeviceStatus::kTimeout);
  EXPECT_EQ(parse_finished_line("Finished test: x - Status: Passed")->status,
            TorchDeviceStatus::kPassed);
  EXPECT_FALSE(parse_finished_line("Started test: x"));
}

// What TorchDevice's runner writes: dotted module, SUCCESS/FAILURE/CRITICAL_FAILURE, and
// str(timedelta) durations (issue 17: every duration was read as its leading 0).
TEST(ParseFinishedLine, ReadsTorchDeviceLines) {
  auto f = parse_finished_line(
      "Finished test: tests.utils.test_b - Status: FAILURE (RC: 1) Duration: 0:00:10.122613");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->module, "tests.utils.test_b");
  EXPECT_EQ(f->status, TorchDeviceStatus::kFailed);
  EXPECT_EQ(f->return_code, 1);
  EXPECT_DOUBLE_EQ(f->duration_s, 10.122613);
  auto crash = parse_finished_line(
      "Finished test: tests.models.test_crash - Status: CRITICAL_FAILURE (RC: -11) Duration: "
      "1:02:03");
  ASSERT_TRUE(crash);
  EXPECT_EQ(crash->status, TorchDeviceStatus::kCrashed);
  EXPECT_EQ(crash->return_code, -11);
  EXPECT_DOUBLE_EQ(crash->duration_s, 3723);
  EXPECT_EQ(
      parse_finished_line("Finished test: x - Status: SUCCESS (RC: 0) Duration: 0:00:01")->status,
      TorchDeviceStatus::kPassed);
}

TEST(ParseDuration, ReadsTimedeltasAndSeconds) {
  EXPECT_DOUBLE_EQ(*parse_duration("0:00:00.080340"), 0.08034);
  EXPECT_DOUBLE_EQ(*parse_duration("0:01:02"), 62);
  EXPECT_DOUBLE_EQ(*parse_duration("12:00:00.5"), 43200.5);
  EXPECT_DOUBLE_EQ(*parse_duration("1 day, 0:00:01"), 86401);
  EXPECT_DOUBLE_EQ(*parse_duration("2 days, 1:00:00.25"), 2 * 86400 + 3600.25);
  EXPECT_DOUBLE_EQ(*parse_duration("12.50s"), 12.5);
  EXPECT_DOUBLE_EQ(*parse_duration(" 7 "), 7);
  EXPECT_FALSE(parse_duration(""));
  EXPECT_FALSE(parse_duration("soon"));
  EXPECT_FALSE(parse_duration("nan"));
  EXPECT_FALSE(parse_duration("inf s"));
  EXPECT_FALSE(parse_duration("-3s"));
  EXPECT_FALSE(parse_duration("0:00"));
  EXPECT_FALSE(parse_duration("-1 day, 23:59:59"));
}

// Finding each file's log is a few hash look-ups, not a scan of every log (issue 17: 51,200
// files took 344 s). A scan would examine n² = 2.6e9 paths here.
TEST(PerFileLogIndex, FindsEachOfManyLogsInConstantLookups) {
  constexpr int kFiles = 51200;
  std::vector<std::string> paths;
  auto module = [](int i) { return fmt::format("tests/models/m{}/test_{}.py", i % 400, i); };
  for (int i = 0; i < kFiles; ++i) {
    // TorchDevice's layout for even files, the full path for odd ones.
    paths.push_back(i % 2 == 0 ? fmt::format("proj/models/m{}/test_{}.py.log", i % 400, i)
                               : "other/" + module(i) + ".log");
  }
  PerFileLogIndex index(paths);
  ASSERT_EQ(index.size(), static_cast<std::size_t>(kFiles));
  for (int i = 0; i < kFiles; ++i) {
    const std::string* hit = index.find(module(i), i % 2 == 0 ? "proj" : "", "");
    ASSERT_NE(hit, nullptr) << module(i);
    ASSERT_EQ(*hit, paths[static_cast<std::size_t>(i)]);
  }
  EXPECT_LE(index.lookups(), 3U * kFiles);
  EXPECT_EQ(index.find("tests/models/m0/test_1.py", "", ""), nullptr);  // 1 % 400 = 1
}

TEST(PerFileLogIndex, PrefersTheLogTheOverallLogNames) {
  PerFileLogIndex index(
      {"a/utils/test_b.py.log", "b/utils/test_b.py.log", "x/tests/utils/test_b.py.log"});
  EXPECT_EQ(*index.find("tests/utils/test_b.py", "", "test_automation/logs/b/utils/test_b.py.log"),
            "b/utils/test_b.py.log");
  EXPECT_EQ(*index.find("tests/utils/test_b.py", "b", ""), "b/utils/test_b.py.log");
  EXPECT_EQ(*index.find("tests/utils/test_b.py", "", ""), "a/utils/test_b.py.log");
  EXPECT_EQ(*index.find("tests/utils/test_b.py", "", "/elsewhere/z/q.py.log"),
            "a/utils/test_b.py.log");
  EXPECT_EQ(index.find("tests/utils/test_c.py", "", ""), nullptr);
}

// The head of an overall log TorchDevice's runner wrote
// (tests/runner/fixtures/torchdevice/logs/), two files of five finished.
TEST(ReadOverallLog, ReadsTheFinishedFilesTheirLogsTheFilesFoundAndTheProject) {
  LineReader lines = LineReader::from_string(
      "Target project repo: /tmp/tdproj/minisuite\n"
      "TorchDevice repo: td (CWD)\n"
      "Log directory for individual tests: test_automation/logs/minisuite\n"
      "\n"
      "Found 3 test files to run:\n"
      "  - tests/utils/test_b.py\n"
      "  - tests/models/test_crash.py\n"
      "  - tests/test_tensors.py\n"
      "--------------------------------------------------\n"
      "\n"
      "Preparing to run test 1/3: test_b.py\n"
      "Finished test: tests.utils.test_b - Status: FAILURE (RC: 1) Duration: 0:00:10.122613\n"
      "  Log file: test_automation/logs/minisuite/utils/test_b.py.log\n"
      "  Test Command: python -m unittest -v tests.utils.test_b\n"
      "Finished test: tests.models.test_crash - Status: CRITICAL_FAILURE (RC: -11) Duration: "
      "0:00:09.652968\n"
      "Finished test: tests/test_tensors.py - Status: SUCCESS (RC: 0) Duration: 1.5s\n");
  const OverallLog log = read_overall_log(lines);
  EXPECT_TRUE(log.path.empty());
  EXPECT_EQ(log.project_root, "/tmp/tdproj/minisuite");
  EXPECT_EQ(log.project, "minisuite");
  EXPECT_EQ(log.found,
            (std::vector<std::string>{"tests/utils/test_b.py", "tests/models/test_crash.py",
                                      "tests/test_tensors.py"}));
  ASSERT_EQ(log.finished.size(), 3U);
  EXPECT_EQ(log.finished[0].module, "tests.utils.test_b");
  EXPECT_EQ(log.finished[0].status, TorchDeviceStatus::kFailed);
  EXPECT_EQ(log.finished[0].log_file, "test_automation/logs/minisuite/utils/test_b.py.log");
  EXPECT_EQ(log.finished[1].status, TorchDeviceStatus::kCrashed);
  EXPECT_EQ(log.finished[1].log_file, "") << "the next line is another file's";
  EXPECT_EQ(log.finished[2].module, "tests/test_tensors.py");
  EXPECT_DOUBLE_EQ(log.finished[2].duration_s, 1.5);
}

TEST(ReadOverallLog, TakesTheProjectFromTheLogFolderWithoutAProjectRepo) {
  LineReader lines = LineReader::from_string(
      "Log directory for individual tests: /tmp/tdlogs2/slowsuite/\n"
      "Finished test: tests.test_fast - Status: SUCCESS (RC: 0) Duration: 0:00:02.987409\n");
  const OverallLog log = read_overall_log(lines);
  EXPECT_EQ(log.project_root, "");
  EXPECT_EQ(log.project, "slowsuite");
  ASSERT_EQ(log.finished.size(), 1U);
  LineReader empty = LineReader::from_string("");
  EXPECT_TRUE(read_overall_log(empty).finished.empty());
}

TEST(TorchDeviceLog, ModulesBecomePathsAndLogNamesSeries) {
  EXPECT_EQ(module_path("tests.utils.test_x"), "tests/utils/test_x.py");
  EXPECT_EQ(module_path("tests/utils/test_x.py"), "tests/utils/test_x.py");
  EXPECT_EQ(series_of("logs/transformers_20250501_100000.log"), "transformers");
  EXPECT_EQ(series_of("utils_plus_2_more_2026-11-22_22-27-01.log"), "utils");
  EXPECT_EQ(series_of("_x.log"), "_x") << "a name that starts with '_' stays whole";
}

TEST(TorchDeviceLog, APerFileLogIsPytestsWhenItsSessionStartsEarly) {
  testing::TempDir dir;
  testing::write_file(dir / "a.py.log",
                      "============================= test session starts "
                      "==============================\nplatform linux\n");
  testing::write_file(dir / "b.py.log", "test_x (tests.test_b.T) ... ok\n");
  std::string late;
  for (int i = 0; i < 20; ++i) late += "noise\n";
  testing::write_file(dir / "c.py.log", late + "=== test session starts ===\n");
  EXPECT_TRUE(looks_like_pytest(dir / "a.py.log"));
  EXPECT_FALSE(looks_like_pytest(dir / "b.py.log"));
  EXPECT_FALSE(looks_like_pytest(dir / "c.py.log")) << "only the first 20 lines are looked at";
}

}  // namespace
}  // namespace devshim
