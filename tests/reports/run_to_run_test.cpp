// A run against its previous run and its flaky tests (reports/run_to_run.cpp), and --fail-on
// (reports/fail_on.cpp), on the recorded sample run of report_fixture.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "reports/fail_on.h"
#include "reports/json_report.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "reports/write_reports.h"
#include "tests/reports/report_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

TEST(ChangeClass, EveryCombination) {
  using S = CaseStatus;
  EXPECT_EQ(change_class(S::kPassed, S::kFailed), "new_failure");
  EXPECT_EQ(change_class(S::kSkipped, S::kError), "new_failure");
  EXPECT_EQ(change_class(std::nullopt, S::kFailed), "new_failure");
  EXPECT_EQ(change_class(S::kFailed, S::kPassed), "fixed");
  EXPECT_EQ(change_class(S::kError, S::kSkipped), "fixed");
  EXPECT_EQ(change_class(S::kFailed, S::kError), "still_failing");
  EXPECT_EQ(change_class(S::kPassed, S::kPassed), "unchanged");
  EXPECT_EQ(change_class(std::nullopt, S::kPassed), "unchanged");
  EXPECT_EQ(change_class(S::kPassed, S::kPassed, true), "flaky");
  EXPECT_EQ(change_class(S::kFailed, S::kPassed, true), "flaky") << "neither fixed nor new";
  EXPECT_EQ(change_class(std::nullopt, S::kFailed, false, true), "missing_before")
      << "absent because the previous run's file stopped before it: not new";
  EXPECT_EQ(change_class(std::nullopt, S::kPassed, false, true), "missing_before");
  EXPECT_EQ(change_class(S::kPassed, S::kFailed, false, true), "new_failure");
  EXPECT_EQ(change_classes().size(), 7U);
}

class RunToRun : public ::testing::Test {
 protected:
  void SetUp() override { testing::record_sample_run(run_); }
  Report report() {
    Store store(run_.db());
    return build_report(store, run_.run_id, run_.out());
  }
  testing::RecordedRun run_;
};

TEST_F(RunToRun, ClassifiesEveryTestAgainstThePreviousRun) {
  const Report r = report();
  ASSERT_TRUE(r.previous);
  EXPECT_EQ(r.previous->previous_run, r.run.previous_run);
  EXPECT_EQ(r.previous->started_at, "2026-11-20T10:00:00Z");
  const auto& c = r.previous->counts;
  EXPECT_EQ(c.at("still_failing"), 31) << "30 tolerance tests and test_import.py as a whole";
  EXPECT_EQ(c.at("new_failure"), 3) << "test_zeros, the hostile test, test_segv";
  EXPECT_EQ(c.at("fixed"), 1) << "test_xfail";
  EXPECT_EQ(c.at("flaky"), 1);
  EXPECT_EQ(c.at("unchanged"), 1) << "test_skipped";
  ASSERT_EQ(r.previous->fixed.size(), 1U);
  EXPECT_EQ(r.previous->fixed[0].name, "test_xfail");
  EXPECT_EQ(r.previous->fixed[0].previous_status, "failed");
  EXPECT_EQ(r.previous->fixed[0].status, "xfailed");
  bool absent = false;
  for (const auto& n : r.previous->new_failures) absent = absent || n.previous_status == "absent";
  EXPECT_TRUE(absent);
  ASSERT_EQ(r.flaky.size(), 1U);
  EXPECT_EQ(r.flaky[0].name, "test_ok");
  ASSERT_EQ(r.flaky[0].attempts.size(), 2U);
  EXPECT_EQ(r.flaky[0].attempts[0].message, "TimeoutError: slow disk");
  for (const auto& f : r.files) {
    for (const auto& rc : f.cases) {
      EXPECT_FALSE(rc.change.empty()) << rc.test.name;
      EXPECT_EQ(rc.flaky, rc.test.name == "test_ok");
    }
  }
}

TEST_F(RunToRun, AgainstComparesWithTheRunGivenInsteadOfThePreviousRun) {
  Store store(run_.db());
  const Report r = build_report(store, run_.run_id, run_.out(), /*against=*/run_.run_id);
  ASSERT_TRUE(r.previous);
  EXPECT_TRUE(r.previous->against);
  EXPECT_EQ(r.previous->previous_run, run_.run_id);
  EXPECT_EQ(r.run.previous_run, build_report(store, run_.run_id, run_.out()).run.previous_run)
      << "the run's own previous run is still what the report says it is";
  EXPECT_TRUE(r.previous->new_failures.empty()) << "against itself nothing is new";
  EXPECT_TRUE(r.previous->fixed.empty());
  EXPECT_GT(r.previous->counts.at("still_failing"), 0);
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find(fmt::format("## Compared with run {} (", run_.run_id)), std::string::npos);
  EXPECT_EQ(md.find("## Changes since run"), std::string::npos);
  EXPECT_EQ(render_json(r)["previous"]["chosen"], "against");
  EXPECT_EQ(render_json(build_report(store, run_.run_id, run_.out()))["previous"]["chosen"],
            "previous");
  EXPECT_THROW(build_report(store, run_.run_id, run_.out(), 999), UsageError);
}

// The previous run's reports, rendered again after the run, link forward to the run compared
// with it (to its reports, when they are written).
TEST_F(RunToRun, ThePreviousRunsReportLinksForwardToTheRunComparedWithIt) {
  Store store(run_.db());
  write_reports(store, run_.run_id, run_.out());
  const std::int64_t previous = store.run(run_.run_id)->previous_run;
  const auto dir = run_.out().parent_path() / "previous-report";
  const Report r = build_report(store, previous, dir);
  ASSERT_EQ(r.later_runs.size(), 1U);
  EXPECT_EQ(r.later_runs[0].run, run_.run_id);
  EXPECT_EQ(r.later_runs[0].relation, "previous");
  EXPECT_EQ(dir / r.later_runs[0].html, dir / "../" / run_.out().filename() / "report.html");
  EXPECT_NE(render_markdown(r).find(fmt::format(
                "| Later runs | run {} (compared with this run): [report.md](../{}/report.md)",
                run_.run_id, run_.out().filename().string())),
            std::string::npos);
  EXPECT_EQ(render_json(r)["later_runs"][0]["relation"], "previous");
  EXPECT_TRUE(build_report(store, run_.run_id, run_.out()).later_runs.empty());
}

// A night on another torch version has no previous run; its reports say which run it could be
// compared with, and how.
TEST_F(RunToRun, ARunOnOtherVersionsNamesTheRunItCouldBeComparedWith) {
  Store store(run_.db());
  RunRecord next = *store.run(run_.run_id);
  store.finish_run(run_.run_id, "failed", "2026-11-21T10:10:00Z");
  auto env = nlohmann::json::parse(next.environment);
  env["torch"] = "2.14.0+cpu";
  next.environment = env.dump();
  next.previous_run = 0;
  next.started_at = "2026-11-22T10:00:00Z";
  const std::int64_t id = store.begin_run(next, {"test_ok.py"});
  store.finish_run(id, "passed", "2026-11-22T10:01:00Z");
  const Report r = build_report(store, id, run_.out());
  EXPECT_FALSE(r.previous);
  ASSERT_TRUE(r.other_versions);
  EXPECT_EQ(r.other_versions->run, run_.run_id);
  EXPECT_EQ(r.other_versions->versions.torch, "2.13.0+cpu");
  EXPECT_EQ(r.other_versions->own.torch, "2.14.0+cpu");
  EXPECT_NE(
      render_markdown(r).find(fmt::format("`runner report {} --against {}`", id, run_.run_id)),
      std::string::npos)
      << render_markdown(r);
  EXPECT_EQ(render_json(r)["previous_other_versions"]["torch"], "2.13.0+cpu");
  EXPECT_FALSE(build_report(store, run_.run_id, run_.out()).other_versions)
      << "a run with a previous run";
}

TEST_F(RunToRun, FailOnDecidesTheExitCode) {
  Report r = report();
  EXPECT_EQ(fail_on_exit_code(FailOn::kAny, r, kExitFailures), kExitFailures);
  EXPECT_EQ(fail_on_exit_code(FailOn::kNewFailures, r, kExitFailures), kExitFailures);
  EXPECT_EQ(fail_on_exit_code(FailOn::kNewFailures, r, kExitInterrupted), kExitInterrupted);
  r.previous->counts["new_failure"] = 0;
  EXPECT_EQ(fail_on_exit_code(FailOn::kNewFailures, r, kExitFailures), kExitOk)
      << "only still failing and flaky tests";
  EXPECT_EQ(fail_on_exit_code(FailOn::kRegressions, r, kExitFailures), kExitOk)
      << "no baseline: like new-failures";
  r.differential.emplace();
  EXPECT_EQ(fail_on_exit_code(FailOn::kRegressions, r, kExitFailures), kExitFailures)
      << "the baseline passed no test: nothing compared, the run's own code";
  r.differential->baseline_passed = 3;
  EXPECT_EQ(fail_on_exit_code(FailOn::kRegressions, r, kExitFailures), kExitOk);
  r.differential->regressions.push_back({});
  EXPECT_EQ(fail_on_exit_code(FailOn::kRegressions, r, kExitOk), kExitFailures);
  r.previous.reset();
  EXPECT_EQ(fail_on_exit_code(FailOn::kNewFailures, r, kExitFailures), kExitFailures)
      << "no previous run: every failure is new";
  EXPECT_EQ(parse_fail_on("new-failures"), FailOn::kNewFailures);
  EXPECT_FALSE(parse_fail_on("sometimes"));
}

// CUDA-branch failures gate apart from regressions; a list of policies gives 1 when any does.
TEST_F(RunToRun, FailOnCudaBranchFailuresAndLists) {
  Report r = report();
  r.previous.reset();
  EXPECT_EQ(fail_on_exit_code(FailOn::kCudaBranchFailures, r, kExitFailures), kExitOk)
      << "no baseline: no CUDA-branch failure";
  r.differential.emplace();
  r.differential->baseline_run = 1;
  r.differential->baseline_passed = 3;
  r.differential->cuda_branch_failures.push_back({});
  EXPECT_EQ(fail_on_exit_code(FailOn::kCudaBranchFailures, r, kExitOk), kExitFailures);
  EXPECT_EQ(fail_on_exit_code(FailOn::kRegressions, r, kExitFailures), kExitOk)
      << "a CUDA-branch failure is no regression";
  EXPECT_EQ(fail_on_reason(FailOn::kCudaBranchFailures, r, kExitOk),
            "--fail-on cuda-branch-failures: 1 CUDA-branch failure against baseline run 1, so "
            "exit 1");
  const auto both = parse_fail_on_list("regressions,cuda-branch-failures");
  ASSERT_TRUE(both);
  EXPECT_EQ(*both, (FailOnList{FailOn::kRegressions, FailOn::kCudaBranchFailures}));
  EXPECT_EQ(fail_on_exit_code(*both, r, kExitFailures), kExitFailures);
  EXPECT_EQ(fail_on_reasons(*both, r, kExitFailures),
            (std::vector<std::string>{
                "--fail-on regressions: no regression against baseline run 1, so exit 0",
                "--fail-on cuda-branch-failures: 1 CUDA-branch failure against baseline run 1, "
                "so exit 1"}));
  r.differential->cuda_branch_failures.clear();
  EXPECT_EQ(fail_on_exit_code(*both, r, kExitFailures), kExitOk);
  EXPECT_EQ(fail_on_exit_code(*both, r, kExitInterrupted), kExitInterrupted);
  EXPECT_EQ(parse_fail_on_list("regressions,regressions"), FailOnList{FailOn::kRegressions});
  EXPECT_FALSE(parse_fail_on_list(""));
  EXPECT_FALSE(parse_fail_on_list("regressions,"));
  EXPECT_FALSE(parse_fail_on_list("regressions,sometimes"));
}

TEST_F(RunToRun, FailOnSaysWhyTheExitCodeIsWhatItIs) {
  // "run 2 failed" then exit 0 must not go without a word.
  Report r = report();
  EXPECT_EQ(fail_on_reason(FailOn::kAny, r, kExitFailures), "");
  EXPECT_EQ(fail_on_reason(FailOn::kNewFailures, r, kExitInterrupted), "");
  r.previous->counts["new_failure"] = 0;
  EXPECT_EQ(fail_on_reason(FailOn::kNewFailures, r, kExitFailures),
            "--fail-on new-failures: no test fails that did not in run " +
                std::to_string(r.previous->previous_run) + ", so exit 0");
  r.previous->counts["new_failure"] = 2;
  EXPECT_NE(fail_on_reason(FailOn::kNewFailures, r, kExitFailures).find("2 tests fail that did"),
            std::string::npos);
  r.differential.emplace();
  r.differential->baseline_run = 1;
  r.differential->baseline_passed = 3;
  EXPECT_EQ(fail_on_reason(FailOn::kRegressions, r, kExitFailures),
            "--fail-on regressions: no regression against baseline run 1, so exit 0");
  r.previous.reset();
  EXPECT_NE(fail_on_reason(FailOn::kNewFailures, r, kExitFailures).find("every failure is new"),
            std::string::npos);
}

TEST_F(RunToRun, FlakyTestsAreNoFailureCluster) {
  const Report r = report();
  for (const auto& cl : r.clusters) {
    for (const auto& t : cl.tests) EXPECT_NE(t.name, "test_ok");
  }
}

}  // namespace
}  // namespace devshim
