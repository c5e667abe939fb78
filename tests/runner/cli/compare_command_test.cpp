// `runner compare A B` on a real database (runner/cli/compare_command.h): ids, latest, latest~N,
// text, JSON, and compare.md, compare.json and compare.html written with -o.
#include "runner/cli/compare_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "reports/comparison_report.h"
#include "tests/reports/report_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using S = CaseStatus;
using testing::TempDir;

class CompareRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    Store store(db());
    testing::record_compared_run(store, "default",
                                 {{"test_same", S::kPassed},
                                  {"test_reg", S::kPassed},
                                  {"test_fix", S::kFailed},
                                  {"test_skip", S::kPassed},
                                  {"test_run", S::kSkipped},
                                  {"test_gone", S::kPassed}});
    testing::record_compared_run(store, "accelerator-only",
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

}  // namespace
}  // namespace devshim
