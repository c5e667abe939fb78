// `runner runs` (its table and --json) and `runner history --mode/--json` on a real database.
#include "runner/cli/runs_command.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "runner/cli/history_command.h"
#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using nlohmann::json;
using testing::TempDir;

// A run of one file with a passing and a failing test, in `mode`, finished a minute after it
// started unless `finished` is false.
std::int64_t record_run(Store& store, const std::string& mode, bool finished = true) {
  RunRecord r;
  r.suite = "demo";
  r.suite_file = "/s/demo/suite.json";
  r.framework = "unittest";
  r.mode = mode;
  r.started_at = "2026-11-23T08:00:00Z";
  r.project_root = "/proj";
  r.tests_dir = "tests";
  r.out_dir = "/out";
  r.environment =
      R"({"torch": "2.13.0+cpu", "shim": {"active": true, "policy": "accelerator-only",)"
      R"( "version": "0.2.0"}, "start": {"mode": ")" +
      std::string(mode == "shim" ? "warm" : "cold") + R"("}})";
  const std::int64_t id = store.begin_run(r, {"test_a.py"});
  FileRecord f;
  f.path = "test_a.py";
  f.status = FileStatus::kFailed;
  TestCase ok, bad;
  ok.classname = bad.classname = "tests.test_a.A";
  ok.name = "test_ok";
  ok.status = CaseStatus::kPassed;
  bad.name = "test_bad";
  bad.status = CaseStatus::kFailed;
  bad.exception = "AssertionError";
  bad.message = mode + " says no";
  store.record_file(id, f, {ok, bad});
  if (finished) store.finish_run(id, "failed", "2026-11-23T08:01:00Z");
  return id;
}

std::string captured(const std::function<void()>& command) {
  ::testing::internal::CaptureStdout();
  command();
  return ::testing::internal::GetCapturedStdout();
}

TEST(RunsCommand, ShowsTestsPassRateAndComparisonsFromTheStoredSummary) {
  TempDir dir;
  {
    Store store(dir / "results.db");
    const std::int64_t first = record_run(store, "shim");
    // What a report stores (reports/report.h, run_summary): compared with a previous run, no
    // baseline.
    store.set_summary(first, R"({"tests": 2, "pass_rate": 0.5, "duration_s": 60,
                                 "new_failures": 1, "regressions": null})");
    record_run(store, "baseline", /*finished=*/false);  // running: no report, no summary yet
  }
  const std::string table = captured([&] { list_runs(dir / "results.db", 20); });
  EXPECT_NE(table.find("duration  tests   pass  new  reg lost cbfail  files"), std::string::npos)
      << table;
  // Run 1: the summary's counts; the shim's policy and versions from the environment.
  EXPECT_NE(table.find("    1  demo             shim     accelerator-only 0.2.0  2.13.0+cpu  warm  "
                       "failed      2026-11-23T08:00:00Z     1:00      2  50.0%    1    -    -     "
                       " -  1 failed"),
            std::string::npos)
      << table;
  // Run 2: counted from its cases; no report has compared it with anything yet.
  // A baseline run's shim is not active: no shim version.
  EXPECT_NE(table.find("    2  demo             baseline -          -      2.13.0+cpu  cold  "
                       "running     2026-11-23T08:00:00Z        -      2  50.0%    ?    ?    ?     "
                       " ?  1 failed"),
            std::string::npos)
      << table;

  const json runs = json::parse(captured([&] { list_runs(dir / "results.db", 20, true); }));
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_EQ(runs[0]["id"], 2);
  EXPECT_TRUE(runs[0]["summary"].is_null());
  EXPECT_TRUE(runs[0]["finished_at"].is_null());
  EXPECT_EQ(runs[1]["policy"], "accelerator-only");
  EXPECT_EQ(runs[1]["shim_version"], "0.2.0");
  EXPECT_EQ(runs[1]["torch"], "2.13.0+cpu");
  EXPECT_TRUE(runs[0]["shim_version"].is_null());
  EXPECT_EQ(runs[1]["start_mode"], "warm");
  EXPECT_EQ(runs[0]["start_mode"], "cold");
  EXPECT_EQ(runs[1]["summary"]["new_failures"], 1);
  EXPECT_EQ(runs[1]["tests"], 2);
  EXPECT_EQ(runs[1]["files"]["failed"], 1);
}

// Lost tests count with the regressions and have their own column; CUDA-branch failures are no
// regressions and have theirs.
TEST(RunsCommand, LostTestsCountWithTheRegressionsAndHaveTheirOwnColumn) {
  TempDir dir;
  {
    Store store(dir / "results.db");
    const std::int64_t id = record_run(store, "shim");
    // A differential shim run whose files failed at import: what run_summary stores.
    store.set_summary(id, R"({"tests": 2, "pass_rate": 0.5, "duration_s": 60,
                              "new_failures": null, "regressions": 1982, "lost": 1982,
                              "cuda_branch_failures": 34})");
  }
  const std::string table = captured([&] { list_runs(dir / "results.db", 20); });
  EXPECT_NE(table.find("2  50.0%    - 1982 1982     34  1 failed"), std::string::npos) << table;
}

TEST(HistoryCommand, ModeKeepsShimOrBaselineRunsAndJsonListsThem) {
  TempDir dir;
  {
    Store store(dir / "results.db");
    record_run(store, "baseline");
    record_run(store, "shim");
  }
  const std::string test = "tests.test_a.A::test_bad";
  const json both = json::parse(captured(
      [&] { history_command(dir / "results.db", test, HistoryFilter{}, /*as_json=*/true); }));
  ASSERT_EQ(both.size(), 2U);
  EXPECT_EQ(both[0]["mode"], "shim");
  EXPECT_EQ(both[0]["message"], "AssertionError: shim says no");
  const json baseline = json::parse(captured([&] {
    history_command(dir / "results.db", test, HistoryFilter{"", "baseline", 30}, true);
  }));
  ASSERT_EQ(baseline.size(), 1U);
  EXPECT_EQ(baseline[0]["run"], 1);
  EXPECT_EQ(baseline[0]["status"], "failed");
  const std::string table = captured([&] {
    history_command(dir / "results.db", test, HistoryFilter{"", "shim", 30});
  });
  EXPECT_NE(table.find("1 run (1 failed)"), std::string::npos) << table;
  EXPECT_EQ(table.find("baseline"), std::string::npos) << table;
}

}  // namespace
}  // namespace devshim
