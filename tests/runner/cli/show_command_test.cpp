#include "runner/cli/show_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;

// A run of one passing file, finished with `status`.
std::int64_t record_run(Store& store, const std::string& status) {
  RunRecord r;
  r.suite = "demo";
  r.suite_file = "/s/demo/suite.json";
  r.framework = "unittest";
  r.started_at = "2026-11-23T08:00:00Z";
  r.project_root = "/proj";
  r.tests_dir = "tests";
  r.out_dir = "/out";
  const std::int64_t id = store.begin_run(r, {"test_a.py"});
  FileRecord f;
  f.path = "test_a.py";
  f.status = FileStatus::kPassed;
  TestCase t;
  t.classname = "A";
  t.name = "test_ok";
  t.status = CaseStatus::kPassed;
  store.record_file(id, f, {t});
  store.finish_run(id, status, "2026-11-23T08:01:00Z");
  return id;
}

std::string show(const std::filesystem::path& db, const std::string& run, const std::string& status,
                 bool all = false) {
  ::testing::internal::CaptureStdout();
  show_run(db, run, status, all);
  return ::testing::internal::GetCapturedStdout();
}

TEST(ShowRun, JsonHasEveryFileAndTestOrThoseOfTheStatus) {
  TempDir dir;
  {
    Store store(dir / "results.db");
    record_run(store, "passed");
  }
  ::testing::internal::CaptureStdout();
  show_run(dir / "results.db", "latest", "", false, /*as_json=*/true);
  const auto all = nlohmann::json::parse(::testing::internal::GetCapturedStdout());
  EXPECT_EQ(all["run"]["id"], 1);
  EXPECT_EQ(all["run"]["finished_at"], "2026-11-23T08:01:00Z");
  ASSERT_EQ(all["files"].size(), 1U);
  EXPECT_EQ(all["files"][0]["log"], nullptr);
  ASSERT_EQ(all["files"][0]["tests"].size(), 1U) << "a passing test too: JSON is for tools";
  EXPECT_EQ(all["files"][0]["tests"][0]["name"], "test_ok");
  ::testing::internal::CaptureStdout();
  show_run(dir / "results.db", "latest", "failed", false, true);
  EXPECT_TRUE(nlohmann::json::parse(::testing::internal::GetCapturedStdout())["files"].empty());
}

TEST(ShowRun, AFilterNothingMatchesSaysSo) {
  TempDir dir;
  {
    Store store(dir / "results.db");
    record_run(store, "passed");
  }
  const std::string out = show(dir / "results.db", "latest", "failed");
  EXPECT_NE(out.find("No file or test of run 1 is failed."), std::string::npos) << out;
  EXPECT_EQ(out.find("test_a.py"), std::string::npos) << out;
  EXPECT_EQ(show(dir / "results.db", "latest", "passed").find("No file or test"),
            std::string::npos);
}

TEST(ShowRun, PassedFilesAreCountedNotListedUnlessAllIsGiven) {
  // A real suite passes thousands of files: the default shows what needs a look.
  TempDir dir;
  {
    Store store(dir / "results.db");
    record_run(store, "passed");
  }
  std::string out = show(dir / "results.db", "latest", "");
  EXPECT_EQ(out.find("test_a.py"), std::string::npos) << out;
  EXPECT_NE(out.find("1 passed file not listed (--all lists them with their tests)"),
            std::string::npos)
      << out;
  out = show(dir / "results.db", "latest", "", /*all=*/true);
  EXPECT_NE(out.find("test_a.py"), std::string::npos) << out;
  EXPECT_NE(out.find("A.test_ok"), std::string::npos) << out;  // unittest's id
  EXPECT_EQ(out.find("not listed"), std::string::npos) << out;
}

TEST(ShowRun, AnInterruptedRunEndsWithTheCommandThatResumesIt) {
  TempDir dir;
  {
    Store store(dir / "results.db");
    record_run(store, "passed");
    record_run(store, "interrupted");
  }
  EXPECT_NE(show(dir / "results.db", "2", "")
                .find("Interrupted: finish it with  runner /s/demo/suite.json --resume 2"),
            std::string::npos);
  EXPECT_EQ(show(dir / "results.db", "1", "").find("Interrupted"), std::string::npos);
}

// A differential shim run whose file failed at import: show names the exception, where it
// happened, and each test of the baseline it lost (issue 32: it said "no tests parsed").
TEST(ShowRun, AFileThatReportedNoTestShowsItsErrorAndTheTestsItLost) {
  TempDir dir;
  {
    Store store(dir / "results.db");
    const std::int64_t baseline = record_run(store, "passed");
    RunRecord r;
    r.suite = "demo";
    r.suite_file = "/s/demo/suite.json";
    r.framework = "pytest";
    r.started_at = "2026-11-23T08:02:00Z";
    r.project_root = "/proj";
    r.tests_dir = "tests";
    r.out_dir = "/out";
    r.baseline_run = baseline;
    const std::int64_t id = store.begin_run(r, {"test_a.py"});
    FileRecord f;
    f.path = "test_a.py";
    f.status = FileStatus::kError;
    f.exit_code = 4;
    TestCase c;
    c.classname = "test_a";
    c.name = "<collection>";
    c.status = CaseStatus::kError;
    c.exception = "ImportError";
    c.message = "no shim here";
    c.traceback =
        "tests/test_a.py:3: in <module>\n    import helper\nhelper.py:9: in <module>\n"
        "    raise ImportError(\"no shim here\")\nE   ImportError: no shim here\n";
    store.record_file(id, f, {c});
    store.finish_run(id, "failed", "2026-11-23T08:03:00Z");
  }
  const std::string out = show(dir / "results.db", "latest", "");
  EXPECT_NE(out.find("error       test_a.py  0.0s  no test reported"), std::string::npos) << out;
  EXPECT_NE(out.find("            error: ImportError: no shim here\n"
                     "              at helper.py:9 in <module>\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("lost: 1 test of baseline run 1 missing from this run"), std::string::npos)
      << out;
  EXPECT_NE(out.find("  lost      tests/test_a.py::A::test_ok  (passed in baseline run 1)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("lost:  1 test of baseline run 1 missing from this run (counted as "
                     "regressions)"),
            std::string::npos)
      << out;
  EXPECT_NE(show(dir / "results.db", "latest", "lost").find("A::test_ok"), std::string::npos);
  ::testing::internal::CaptureStdout();
  show_run(dir / "results.db", "latest", "", false, /*as_json=*/true);
  const auto j = nlohmann::json::parse(::testing::internal::GetCapturedStdout());
  EXPECT_EQ(j["files"][0]["error"]["exception"], "ImportError");
  EXPECT_EQ(j["files"][0]["lost"][0]["name"], "test_ok");
}

}  // namespace
}  // namespace devshim
