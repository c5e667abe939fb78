// Two runs compared test by test on a real database (runner/results/comparison.h) and `runner
// compare` (reports/comparison_report.h): ids, latest, latest~N, text, JSON, and compare.md,
// compare.json and compare.html written with -o.
#include "reports/comparison_report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "runner/base/error.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using S = CaseStatus;
using testing::TempDir;

// One run of suite "s" whose tests have the statuses given, in a shim run with `policy`.
std::int64_t record(Store& store, const std::string& policy,
                    const std::vector<std::pair<std::string, S>>& tests) {
  RunRecord r;
  r.suite = "s";
  r.suite_file = "/s/suite.json";
  r.framework = "pytest";
  r.started_at = "2026-11-23T08:00:00Z";
  r.project_root = "/proj";
  r.tests_dir = "tests";
  r.out_dir = "/out";
  r.environment =
      R"({"torch": "2.13.0+cpu", "shim": {"policy": ")" + policy + R"(", "version": "0.2.0"}})";
  const std::int64_t id = store.begin_run(r, {"test_a.py"});
  FileRecord f;
  f.path = "test_a.py";
  f.status = FileStatus::kFailed;
  std::vector<TestCase> cases;
  for (const auto& [name, status] : tests) {
    TestCase t;
    t.classname = "tests.test_a";
    t.name = name;
    t.status = status;
    t.source = {"test_a.py", static_cast<int>(cases.size()) + 10};
    if (is_failure(status)) {
      t.exception = "RuntimeError";
      t.message = name + " broke";
    }
    cases.push_back(t);
  }
  store.record_file(id, f, cases);
  store.finish_run(id, "failed", "2026-11-23T08:01:00Z");
  return id;
}

class CompareRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    Store store(db());
    record(store, "default",
           {{"test_same", S::kPassed},
            {"test_reg", S::kPassed},
            {"test_fix", S::kFailed},
            {"test_skip", S::kPassed},
            {"test_run", S::kSkipped},
            {"test_gone", S::kPassed}});
    record(store, "accelerator-only",
           {{"test_same", S::kPassed},
            {"test_reg", S::kFailed},
            {"test_fix", S::kPassed},
            {"test_skip", S::kSkipped},
            {"test_run", S::kPassed},
            {"test_new", S::kFailed}});
  }
  std::filesystem::path db() const { return dir_ / "results.db"; }
  std::string compare(const std::string& a, const std::string& b, bool as_json) {
    ::testing::internal::CaptureStdout();
    compare_command(db(), a, b, as_json);
    return ::testing::internal::GetCapturedStdout();
  }
  TempDir dir_;
};

TEST_F(CompareRuns, EveryTestIsClassedAndListedButTheSameOnes) {
  Store store(db());
  const RunComparison c = compare_runs(store, *store.run(1), *store.run(2));
  EXPECT_EQ(c.counts.at("same"), 1);
  EXPECT_EQ(c.counts.at("regressed"), 1);
  EXPECT_EQ(c.counts.at("fixed"), 1);
  EXPECT_EQ(c.counts.at("newly_skipped"), 1);
  EXPECT_EQ(c.counts.at("newly_run"), 2) << "test_run, and test_new that A did not have";
  EXPECT_EQ(c.counts.at("lost"), 1);
  EXPECT_EQ(c.tests.count("same"), 0U);
  ASSERT_EQ(c.tests.at("regressed").size(), 1U);
  EXPECT_EQ(c.tests.at("regressed")[0].name, "test_reg");
  EXPECT_EQ(c.tests.at("regressed")[0].status_a, "passed");
  EXPECT_EQ(c.tests.at("regressed")[0].message, "RuntimeError: test_reg broke");
  EXPECT_EQ(c.tests.at("lost")[0].status_b, "absent");
}

TEST_F(CompareRuns, TheCommandNamesBothRunsPoliciesAndTakesLatestSelectors) {
  const std::string text = compare("latest~1", "latest", false);
  EXPECT_NE(text.find("A: run 1  s  shim  policy default  shim 0.2.0  torch 2.13.0+cpu"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("B: run 2  s  shim  policy accelerator-only"), std::string::npos) << text;
  EXPECT_NE(text.find("regressed           1  passed in A, fails in B"), std::string::npos) << text;
  EXPECT_NE(text.find("regressed (1):\n  tests/test_a.py::test_reg  passed -> failed  "
                      "RuntimeError: test_reg broke\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("test_same"), std::string::npos) << "the same outcome is counted only";

  const auto j = nlohmann::json::parse(compare("1", "2", true));
  EXPECT_EQ(j["b"]["policy"], "accelerator-only");
  EXPECT_EQ(j["counts"]["lost"], 1);
  EXPECT_EQ(j["tests"]["newly_run"].size(), 2U);

  EXPECT_THROW(compare_command(db(), "latest~2", "latest", false), UsageError) << "two runs";
  EXPECT_THROW(compare_command(db(), "latest~x", "latest", false), UsageError);
}

TEST_F(CompareRuns, OutWritesEveryTestOfEachClassLinkedToItsSourceInThreeFormats) {
  const auto out = dir_ / "cmp";
  ::testing::internal::CaptureStdout();
  compare_command(db(), "1", "2", false, "", out.string());
  const std::string printed = ::testing::internal::GetCapturedStdout();
  for (const char* file : {"compare.md", "compare.json", "compare.html"}) {
    EXPECT_NE(printed.find((out / file).string()), std::string::npos) << file;
  }
  const std::string md = testing::read_file(out / "compare.md");
  EXPECT_NE(md.find("# Run 2 compared with run 1"), std::string::npos) << md;
  EXPECT_NE(md.find("| Policy | default | accelerator-only |"), std::string::npos) << md;
  EXPECT_NE(md.find("## regressed (1)"), std::string::npos) << md;
  // test_reg is the second test (line 11); the project is /proj, the folder <dir>/cmp.
  const std::string to_project = std::filesystem::path("/proj").lexically_relative(out).string();
  EXPECT_NE(md.find("| tests/test\\_a.py::test\\_reg | passed → failed | "
                    "RuntimeError: test\\_reg broke | [source](" +
                    to_project + "/test_a.py#L11) |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("test\\_same"), std::string::npos) << "the same outcome is counted only";

  const auto j = nlohmann::json::parse(testing::read_file(out / "compare.json"));
  EXPECT_EQ(j["tests"]["lost"][0]["name"], "test_gone");
  EXPECT_EQ(j["tests"]["lost"][0]["links"]["local"], to_project + "/test_a.py#L15")
      << "a test that is lost links to A's source";
  EXPECT_EQ(j["a"]["policy"], "default");

  const std::string html = testing::read_file(out / "compare.html");
  std::size_t items = 0;
  for (auto at = html.find("<li class=\"test\">"); at != std::string::npos;
       at = html.find("<li class=\"test\">", at + 1)) {
    ++items;
  }
  EXPECT_EQ(items, 6U) << "every test but the same one";
  EXPECT_NE(html.find("id=\"class-newly_run\""), std::string::npos);

  ::testing::internal::CaptureStdout();
  compare_command(db(), "1", "2", false, "json,json", (dir_ / "only").string());
  ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(std::filesystem::exists(dir_ / "only" / "compare.json"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "only" / "compare.md"));
  EXPECT_THROW(compare_command(db(), "1", "2", false, "pdf", out.string()), UsageError);
  EXPECT_THROW(compare_command(db(), "1", "2", false, "md", ""), UsageError) << "--format needs -o";
}

// A shim run numbers parameterized cases otherwise than its baseline: a group with as many cases
// is compared in order, one that grew or shrank is counted as renumbered (its baseline cases are
// not lost) with the regressions its counts prove, which --fail-on regressions counts.
TEST(CompareRenumbered, CasesAreMatchedAsInADifferentialRun) {
  TempDir dir;
  Store store(dir.path() / "results.db");
  const std::int64_t a = record(store, "default",
                                {{"test_eq_0", S::kPassed},
                                 {"test_eq_1", S::kPassed},
                                 {"test_grow_0", S::kPassed},
                                 {"test_grow_1", S::kPassed},
                                 {"test_cut_0", S::kPassed},
                                 {"test_cut_1", S::kPassed},
                                 {"test_cut_2", S::kPassed}});
  // test_eq_* renumbered with as many cases; test_grow_* grew from 2 cases to 4, of which 1 does
  // not fail: at least 2 passing in A - 1 = 1 regression; test_cut_* lost a case (B stopped
  // early): 3 passing in A - 2 = 1 regression.
  const std::int64_t b = record(store, "default",
                                {{"test_eq_00", S::kPassed},
                                 {"test_eq_01", S::kFailed},
                                 {"test_grow_0", S::kPassed},
                                 {"test_grow_1", S::kFailed},
                                 {"test_grow_2", S::kFailed},
                                 {"test_grow_3", S::kFailed},
                                 {"test_cut_00", S::kPassed},
                                 {"test_cut_01", S::kPassed}});
  const RunComparison c = compare_runs(store, *store.run(a), *store.run(b));
  EXPECT_EQ(c.counts.at("same"), 1) << "test_eq_0 and test_eq_00";
  ASSERT_EQ(c.tests.count("regressed"), 1U);
  ASSERT_EQ(c.tests.at("regressed").size(), 1U);
  EXPECT_EQ(c.tests.at("regressed")[0].name, "test_eq_01");
  EXPECT_EQ(c.tests.at("regressed")[0].status_a, "passed");
  EXPECT_EQ(c.counts.at("lost"), 0) << "test_grow_0 and _1 of A are in the renumbered group";
  EXPECT_EQ(c.counts.at("newly_run"), 0);
  EXPECT_EQ(c.counts.at("renumbered"), 6);
  EXPECT_EQ(c.tests.at("renumbered")[0].status_a, "renumbered");
  EXPECT_EQ(c.renumbered_regressions, 2);
  EXPECT_EQ(comparison_regressions(c), 3);

  const ComparisonVerdict v = comparison_verdict(FailOn::kRegressions, c);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_NE(v.reason.find("3 regressions (1 regressed, 0 lost, at least 2 renumbered)"),
            std::string::npos)
      << v.reason;
  ComparisonReport report;
  report.comparison = c;
  const std::string text = render_comparison_text(report);
  EXPECT_NE(text.find("regressions         3  regressed + lost + at least 2 renumbered"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("6 tests of B are parameterized cases numbered otherwise"), std::string::npos)
      << text;
  EXPECT_NE(text.find("At least 2 of them are regressions"), std::string::npos) << text;
}

}  // namespace
}  // namespace devshim
