// The Store's nightly operations (store_nightly.cpp): comparable runs, durations, reruns and
// attempts, a test's history, pruning.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/results/sqlite.h"
#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;

RunRecord run_of(const std::string& suite, const std::string& started = "2026-11-21T00:00:00Z") {
  RunRecord r;
  r.suite = suite;
  r.suite_file = "/s/suite.json";
  r.framework = "unittest";
  r.command_line = {"runner"};
  r.started_at = started;
  r.project_root = "/proj";
  r.tests_dir = "tests";
  r.out_dir = "/out";
  return r;
}

FileRecord file_of(const std::string& path, FileStatus status, double seconds = 1) {
  FileRecord f;
  f.path = path;
  f.status = status;
  f.duration_s = seconds;
  return f;
}

TestCase case_of(const std::string& name, CaseStatus status) {
  TestCase c;
  c.classname = "tests.test_a.T";
  c.name = name;
  c.status = status;
  if (is_failure(status)) {
    c.exception = "AssertionError";
    c.message = "boom";
  }
  return c;
}

std::int64_t finished_run(Store& s, RunRecord r, const std::string& status = "failed") {
  const std::int64_t id = s.begin_run(r, {"test_a.py"});
  s.finish_run(id, status, r.started_at);
  return id;
}

TEST(StoreNightly, TheComparableRunHasTheSameSuiteTargetsModeAndShard) {
  TempDir dir;
  Store s(dir / "r.db");
  const auto a = finished_run(s, run_of("demo"));
  RunRecord other_targets = run_of("demo");
  other_targets.targets = {"sub"};
  finished_run(s, other_targets);
  RunRecord baseline = run_of("demo");
  baseline.mode = "baseline";
  finished_run(s, baseline);
  RunRecord shard = run_of("demo");
  shard.shard = "1/2";
  const auto sharded = finished_run(s, shard);
  finished_run(s, run_of("demo"), "interrupted");
  finished_run(s, run_of("other"));
  auto found = s.comparable_run(run_of("demo"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, a) << "interrupted runs are not compared with";
  EXPECT_EQ(s.comparable_run(shard)->id, sharded);
  EXPECT_EQ(s.comparable_run(shard)->shard, "1/2");
  EXPECT_FALSE(s.comparable_run(run_of("demo"), a));
  EXPECT_FALSE(s.comparable_run(run_of("nothing")));
}

// Issue 20: a night under TORCHDEVICE_POLICY=accelerator-only is not compared with a night under
// the default policy; a shim run recorded before schema 11 (no policy) counts as the default.
TEST(StoreNightly, TheComparableRunHasTheSamePolicy) {
  TempDir dir;
  Store s(dir / "r.db");
  const auto old_default = finished_run(s, run_of("demo"));  // policy "": before schema 11
  RunRecord strict = run_of("demo");
  strict.policy = "accelerator-only";
  const auto accelerator_only = finished_run(s, strict);
  RunRecord fallback = run_of("demo");
  fallback.policy = "default";
  EXPECT_EQ(s.comparable_run(fallback)->id, old_default);
  EXPECT_EQ(s.comparable_run(strict)->id, accelerator_only);
  EXPECT_EQ(s.run(accelerator_only)->policy, "accelerator-only");
  const auto new_default = finished_run(s, fallback);
  EXPECT_EQ(s.comparable_run(run_of("demo"))->id, new_default);
  RunRecord baseline = run_of("demo");
  baseline.mode = "baseline";
  EXPECT_FALSE(s.comparable_run(baseline)) << "no baseline run: policies are the shim's";
}

// Issue 20: a night on another torch or shim version is not compared with silently; a run that
// names no versions yet (still going) is compared on the rest of the key.
TEST(StoreNightly, TheComparableRunHasTheSameTorchAndShimVersions) {
  TempDir dir;
  Store s(dir / "r.db");
  auto with = [](const std::string& mode, const std::string& torch, const std::string& shim) {
    RunRecord r = run_of("demo");
    r.mode = mode;
    r.environment = nlohmann::json{{"torch", torch}, {"shim", {{"version", shim}}}}.dump();
    return r;
  };
  const auto old_torch = finished_run(s, with("shim", "2.12.0", "0.2.0"));
  const auto old_shim = finished_run(s, with("shim", "2.13.0", "0.1.0"));
  RunRecord broken = run_of("demo");
  broken.environment = "{not json";
  const auto unparsable = finished_run(s, broken);
  EXPECT_EQ(s.comparable_run(with("shim", "2.12.0", "0.2.0"))->id, old_torch);
  EXPECT_EQ(s.comparable_run(with("shim", "2.13.0", "0.1.0"))->id, old_shim);
  EXPECT_FALSE(s.comparable_run(with("shim", "2.13.0", "0.2.0")));
  EXPECT_EQ(s.comparable_run(run_of("demo"))->id, unparsable) << "no versions named: any";
  // A baseline run's shim version (the package installed, not active) does not count.
  const auto baseline = finished_run(s, with("baseline", "2.13.0", "0.1.0"));
  EXPECT_EQ(s.comparable_run(with("baseline", "2.13.0", "0.3.0"))->id, baseline);
  EXPECT_EQ(run_versions(with("baseline", "2.13.0", "0.3.0")).shim, "");
  EXPECT_EQ(run_versions(broken), RunVersions{});

  s.set_previous_run(old_shim, old_torch);
  EXPECT_EQ(s.run(old_shim)->previous_run, old_torch);
  s.set_previous_run(old_shim, 0);
  EXPECT_EQ(s.run(old_shim)->previous_run, 0);
}

TEST(StoreNightly, DurationsAreARunningAveragePerSuiteAndFile) {
  TempDir dir;
  Store s(dir / "r.db");
  for (double seconds : {2.0, 4.0, 6.0}) {
    const auto id = s.begin_run(run_of("demo"), {"test_a.py", "test_b.py"});
    s.record_file(id, file_of("test_a.py", FileStatus::kPassed, seconds));
    s.record_file(id, file_of("test_a.py", FileStatus::kPassed, 100));  // same run: once
    s.record_file(id, file_of("test_b.py", FileStatus::kInterrupted, 50));
  }
  auto d = s.durations("demo");
  EXPECT_DOUBLE_EQ(d.at("test_a.py"), 4.0);
  EXPECT_EQ(d.count("test_b.py"), 0U) << "an interrupted file's time says nothing";
  EXPECT_TRUE(s.durations("other").empty());
  // After the window, the newest duration weighs 1/5.
  for (int i = 0; i < 10; ++i) {
    const auto id = s.begin_run(run_of("demo"), {"test_a.py"});
    s.record_file(id, file_of("test_a.py", FileStatus::kPassed, 10));
  }
  const auto id = s.begin_run(run_of("demo"), {"test_a.py"});
  const double before = s.durations("demo").at("test_a.py");
  s.record_file(id, file_of("test_a.py", FileStatus::kPassed, 0.0 + before + 5));
  EXPECT_NEAR(s.durations("demo").at("test_a.py"), before + 1.0, 1e-9);
}

TEST(StoreNightly, RerunsMarkFlakyTestsAndKeepEveryAttempt) {
  TempDir dir;
  Store s(dir / "r.db");
  const auto id = s.begin_run(run_of("demo"), {"test_a.py"});
  s.record_file(
      id, file_of("test_a.py", FileStatus::kFailed),
      {case_of("test_flaky", CaseStatus::kFailed), case_of("test_broken", CaseStatus::kFailed),
       case_of("test_ok", CaseStatus::kPassed)});
  RerunResult rr;
  rr.path = "test_a.py";
  rr.attempts = {{"test_a.py", "tests.test_a.T", "test_flaky", 1, CaseStatus::kFailed, "boom"},
                 {"test_a.py", "tests.test_a.T", "test_flaky", 2, CaseStatus::kPassed, ""},
                 {"test_a.py", "tests.test_a.T", "test_broken", 1, CaseStatus::kFailed, "x"},
                 {"test_a.py", "tests.test_a.T", "test_broken", 2, CaseStatus::kFailed, "x"}};
  rr.flaky = {case_of("test_flaky", CaseStatus::kPassed)};
  rr.note = "flaky: 1 failing test passed on a rerun";
  s.record_reruns(id, rr);
  auto attempts = s.attempts(id);
  ASSERT_EQ(attempts.size(), 4U);
  EXPECT_EQ(attempts[2].name, "test_flaky");
  EXPECT_EQ(attempts[2].attempt, 1);
  EXPECT_EQ(attempts[2].message, "boom");
  for (const auto& c : s.cases(id)) {
    EXPECT_EQ(c.flaky, c.test.name == "test_flaky") << c.test.name;
    if (c.test.name == "test_flaky") {
      EXPECT_EQ(c.test.status, CaseStatus::kPassed);
      EXPECT_EQ(c.test.message, "boom") << "the failure it had stays readable";
    }
  }
  EXPECT_EQ(s.files(id).at(0).status, FileStatus::kFailed);
  EXPECT_EQ(s.files(id).at(0).note, "flaky: 1 failing test passed on a rerun");
  EXPECT_EQ(s.case_counts(id).at(CaseStatus::kPassed), 2U);

  auto h = s.test_history("tests.test_a.T::test_flaky", "", 10);
  ASSERT_EQ(h.size(), 1U);
  EXPECT_TRUE(h[0].flaky);
  EXPECT_EQ(h[0].attempts, 2);
  EXPECT_EQ(h[0].run.suite, "demo");
  EXPECT_EQ(s.test_history("tests.test_a.T.test_flaky", "", 10).size(), 1U);
  EXPECT_EQ(s.test_history("test_a.py::tests.test_a.T::test_flaky", "", 10).size(), 1U);
  EXPECT_EQ(s.test_history("test_flaky", "", 10).size(), 1U);
  EXPECT_EQ(s.test_history("test_flaky", "other", 10).size(), 0U);
  EXPECT_EQ(s.test_history("nope.py::tests.test_a.T::test_flaky", "", 10).size(), 0U);
}

// A suite inside a larger project: pytest named the class from a rootdir above the project root
// (tests/runner/fixtures/rootdir_above); the node id the reports print still finds the test.
TEST(StoreNightly, HistoryFindsANodeIdWhoseClassNameHasTheWayDownInFront) {
  TempDir dir;
  Store s(dir / "r.db");
  const auto id = s.begin_run(run_of("demo"), {"test_a.py"});
  TestCase c = case_of("test_q", CaseStatus::kFailed);
  c.classname = "suites.cuda-idioms.tests.test_a.T";
  s.record_file(id, file_of("test_a.py", FileStatus::kFailed), {c});
  s.finish_run(id, "failed", "2026-11-21T00:00:01Z");
  const auto h = s.test_history("tests/test_a.py::T::test_q", "", 10);
  ASSERT_EQ(h.size(), 1U);
  EXPECT_EQ(h[0].test.classname, "suites.cuda-idioms.tests.test_a.T");
  // The way down ends at a dot: "xtests.test_a.T" is another module's class.
  c.classname = "xtests.test_a.T";
  c.name = "test_r";
  s.record_file(s.begin_run(run_of("demo"), {"test_a.py"}),
                file_of("test_a.py", FileStatus::kFailed), {c});
  EXPECT_TRUE(s.test_history("tests/test_a.py::T::test_r", "", 10).empty());
}

TEST(StoreNightly, PruneKeepsTheNewestRunsOfEachSuiteAndTheBaselinesTheyNeed) {
  TempDir dir;
  Store s(dir / "r.db");
  std::vector<std::int64_t> demo;
  for (int i = 0; i < 4; ++i) {
    RunRecord r = run_of("demo", "2026-11-2" + std::to_string(i) + "T00:00:00Z");
    if (i == 3) r.baseline_run = demo[0];
    if (i > 0) r.previous_run = demo.back();
    demo.push_back(s.begin_run(r, {"test_a.py"}));
    s.record_file(demo.back(), file_of("test_a.py", FileStatus::kFailed),
                  {case_of("test_" + std::to_string(i), CaseStatus::kFailed)});
    s.finish_run(demo.back(), "failed", r.started_at);
  }
  const auto other = finished_run(s, run_of("other", "2026-01-01T00:00:00Z"));
  const auto running = s.begin_run(run_of("demo", "2026-01-01T00:00:00Z"), {});

  std::vector<std::int64_t> ids;
  for (const auto& r : s.prunable_runs(2, "", "")) ids.push_back(r.id);
  // demo keeps its 2 newest (running among them) and demo[0] (the baseline of demo[3]).
  EXPECT_EQ(ids, (std::vector<std::int64_t>{demo[2], demo[1]}));
  (void)running;
  ids.clear();
  for (const auto& r : s.prunable_runs(0, "2026-11-22T00:00:00Z", "demo")) ids.push_back(r.id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{demo[1]})) << "by age, one suite, not a baseline";
  ids.clear();
  for (const auto& r : s.prunable_runs(0, "2026-06-01T00:00:00Z", "")) ids.push_back(r.id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{other})) << "never a running run";

  s.delete_runs({demo[1], demo[2]});
  EXPECT_FALSE(s.run(demo[1]));
  EXPECT_EQ(s.run(demo[3])->previous_run, 0) << "the run it named is gone";
  EXPECT_EQ(s.run(demo[3])->baseline_run, demo[0]);
  sql::Database db(dir / "r.db");
  sql::Statement fk(db, "PRAGMA foreign_key_check");
  EXPECT_FALSE(fk.step());
  sql::Statement sigs(db, "SELECT count(*) FROM signatures");
  ASSERT_TRUE(sigs.step());
  EXPECT_EQ(sigs.int64(0), 1) << "all four cases share one signature, still used";
  sql::Statement files(db, "SELECT count(*) FROM files WHERE run_id IN (?, ?)");
  files.bind(1, demo[1]).bind(2, demo[2]);
  ASSERT_TRUE(files.step());
  EXPECT_EQ(files.int64(0), 0);
  // The deleted runs' own tests (test_1, test_2) go with them; the kept runs' stay.
  sql::Statement tests(db,
                       "SELECT group_concat(n.name, ',') FROM (SELECT n.name FROM tests t "
                       "JOIN names n ON n.id = t.name_id ORDER BY n.name) n");
  ASSERT_TRUE(tests.step());
  EXPECT_EQ(tests.text(0), "test_0,test_3");
  sql::Statement names(db, "SELECT count(*) FROM names");
  ASSERT_TRUE(names.step());
  EXPECT_EQ(names.int64(0), 2);
}

}  // namespace
}  // namespace devshim
