// Regressions told apart from CUDA branches on the runner's command line:
// tests/e2e/suites/cuda-branches without and with the shim, its test processes replayed
// (tests/support/replay_run.h). A test of shared code the shim changes stays a regression; the
// in-body CUDA branches that ran only under the shim are CUDA-branch failures by cause, or pass;
// every place a person reads says so (the closing lines, report.md, whose golden file this run
// makes, report.json, `runner show`, `runner compare`, --fail-on, the gap log).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "runner/results/gap_log.h"
#include "runner/results/store.h"
#include "tests/reports/report_fixture.h"
#include "tests/support/replay_run.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

class CudaBranch : public ::testing::Test {
 protected:
  fs::path db() const { return dir_.path() / "results.db"; }
  fs::path out() const { return dir_.path() / "out"; }
  testing::RunResult runner(std::vector<std::string> args) {
    args.insert(args.end(), {"--db", db().string()});
    return testing::replay_command(args);
  }
  testing::RunResult differential(const std::vector<std::string>& more = {}) {
    std::vector<std::string> args{(fs::path(E2E_SUITES_DIR) / "cuda-branches").string(),
                                  "--differential",
                                  "--out",
                                  out().string(),
                                  "--python",
                                  TEST_PYTHON,
                                  "-j",
                                  "2",
                                  "--db",
                                  db().string()};
    args.insert(args.end(), more.begin(), more.end());
    return testing::replay_run("cuda-branches", out(), args);
  }
  nlohmann::json report_json() const {
    return nlohmann::json::parse(testing::read_file(out() / "report.json"));
  }
  TempDir dir_;
};

TEST_F(CudaBranch, TheClosingLinesTellRegressionsFromCudaBranches) {
  auto r = differential();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("runner: against baseline run 1: 1 regression (1 failing, 0 lost), 0 "
                          "unlocked\n"
                          "runner: CUDA branches that ran only under the shim: 1 pass, 3 fail "
                          "(asserts a CUDA device: 2, the test's own error (any device): 1).\n"
                          "runner: 4 tests took a CUDA path under the shim (device work): 1 "
                          "passed, 3 failed (0 of them fail without the shim too), 0 skipped. 1 "
                          "more only asked (a query, seeding, a stream).\n"),
            std::string::npos)
      << r.output;
}

// report.json: each CUDA-branch failure with its cause, the causes with severity and action; the
// regression apart; the CUDA path counts device work, and apart the test that only asked.
TEST_F(CudaBranch, ReportJsonGroupsTheCudaBranchFailuresByCause) {
  ASSERT_EQ(differential().exit_code, 1);
  const auto json = report_json();
  const auto& d = json["differential"];
  EXPECT_EQ(d["counts"]["regression"], 1) << d["counts"].dump();
  EXPECT_EQ(d["counts"]["cuda_branch_failed"], 3);
  EXPECT_EQ(d["counts"]["cuda_branch_passed"], 1);
  EXPECT_EQ(d["counts"]["compatible"], 2) << "the optimizer's step and the seeding";
  EXPECT_FALSE(d["baseline_saw_cuda"]);
  ASSERT_EQ(d["regressions"].size(), 1U);
  EXPECT_EQ(d["regressions"][0]["name"], "test_zeros_is_a_builtin");
  std::map<std::string, std::string> causes;
  for (const auto& t : d["cuda_branch_failures"]) causes[t["name"]] = t["cause"];
  EXPECT_EQ(causes, (std::map<std::string, std::string>{
                        {"test_branch_asserts_a_cuda_device", "asserts_cuda_device"},
                        {"test_moves_to_cuda", "asserts_cuda_device"},
                        {"test_branch_raises_its_own_error", "own_error"}}));
  ASSERT_EQ(d["cuda_branch_causes"].size(), 2U);
  EXPECT_EQ(d["cuda_branch_causes"][0]["cause"], "asserts_cuda_device");
  EXPECT_EQ(d["cuda_branch_causes"][0]["tests"], 2);
  EXPECT_EQ(d["cuda_branch_causes"][0]["severity"], "low");
  EXPECT_EQ(d["cuda_branch_causes"][1]["cause"], "own_error");

  const auto& c = json["cuda_path"];
  EXPECT_EQ(c["tests"], 4) << c.dump();
  EXPECT_EQ(c["asked"], 1);
  EXPECT_EQ(c["by_reason"],
            (nlohmann::json{{"recorded", 3}, {"in_branch", 1}, {"unskipped", 0}, {"new", 0}}));
  std::map<std::string, std::pair<bool, bool>> marks;  // name → (cuda_path, cuda_asked)
  for (const auto& f : json["files"]) {
    for (const auto& t : f["cases"]) marks[t["name"]] = {t["cuda_path"], t["cuda_asked"]};
  }
  EXPECT_EQ(marks["test_optimizer_step_only"], std::make_pair(false, false))
      << "Adam.step()'s stream query is torch's own";
  EXPECT_EQ(marks["test_only_seeds"], std::make_pair(false, true));
  EXPECT_EQ(marks["test_branch_raises_its_own_error"], std::make_pair(true, false));
  EXPECT_EQ(marks["test_zeros_is_a_builtin"], std::make_pair(false, false));
}

// The gap log: the own error is an entry of its own whose action names no setting, low like the
// device-type check; severities follow what a porter can do, not how many tests.
TEST_F(CudaBranch, TheGapLogNamesNoSettingForTheTestsOwnError) {
  ASSERT_EQ(differential().exit_code, 1);
  Store store(db());
  std::map<std::string, GapEntry> by_api;
  for (GapEntry& e : GapLog(store).for_run(2)) by_api[e.api] = std::move(e);
  const std::string own =
      "test's own error in a CUDA-only branch: AttributeError: 'HalfCauchy' object has no "
      "attribute 'cuda'";
  ASSERT_EQ(by_api.count(own), 1U) << testing::read_file(out() / "report.md");
  EXPECT_EQ(by_api[own].severity, "low");
  EXPECT_TRUE(by_api[own].setting.empty()) << by_api[own].setting;
  EXPECT_EQ(by_api[own].action.rfind("not the shim's", 0), 0U) << by_api[own].action;
  ASSERT_EQ(by_api.count(std::string(kGapDeviceType)), 1U);
  EXPECT_EQ(by_api[std::string(kGapDeviceType)].severity, "low");
  EXPECT_EQ(by_api[std::string(kGapDeviceType)].tests, 2);
}

TEST_F(CudaBranch, ShowCompareAndFailOnUseTheDistinction) {
  ASSERT_EQ(differential().exit_code, 1);
  auto show = runner({"show", "latest"});
  EXPECT_NE(show.output.find("tests/test_branches.py::test_zeros_is_a_builtin [regression]"),
            std::string::npos)
      << show.output;
  EXPECT_NE(show.output.find("tests/test_branches.py::test_branch_raises_its_own_error [CUDA "
                             "path] [CUDA-branch failure]"),
            std::string::npos)
      << show.output;
  EXPECT_NE(show.output.find("against baseline run 1: 1 regression (failing on code that ran both "
                             "ways), 3 CUDA-branch failures"),
            std::string::npos)
      << show.output;

  auto compare = runner({"compare", "1", "2", "--json"});
  EXPECT_EQ(compare.exit_code, 1) << compare.output;  // the one regression
  const std::string json_text = compare.output.substr(0, compare.output.rfind("\nrunner: "));
  const auto counts = nlohmann::json::parse(json_text)["counts"];
  EXPECT_EQ(counts["regressed"], 1) << counts.dump();
  EXPECT_EQ(counts["cuda_branch_failed"], 3) << counts.dump();
  auto branches = runner({"compare", "1", "2", "--fail-on", "cuda-branch-failures"});
  EXPECT_EQ(branches.exit_code, 1);
  EXPECT_NE(branches.output.find("--fail-on cuda-branch-failures: 3 CUDA-branch failures from run "
                                 "1 to run 2, so exit 1"),
            std::string::npos)
      << branches.output;
  auto bad = runner({"compare", "1", "2", "--fail-on", "regressions,often"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("cuda-branch-failures"), std::string::npos) << bad.output;
}

TEST_F(CudaBranch, FailOnGatesOnEither) {
  auto r = differential({"--fail-on", "cuda-branch-failures,regressions"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("runner: --fail-on cuda-branch-failures: 3 CUDA-branch failures "
                          "against baseline run 1, so exit 1\n"
                          "runner: --fail-on regressions: 1 regression against baseline run 1, "
                          "so exit 1\n"),
            std::string::npos)
      << r.output;
}

// report.md of this real run, the golden file of both kinds: times, the host, the commit the
// recording was made at, the runner and the folders normalised (tests/reports/approve.sh
// re-approves).
TEST_F(CudaBranch, ReportMarkdownGolden) {
  ASSERT_EQ(differential().exit_code, 1);
  const nlohmann::json run = report_json()["run"];
  std::string md = testing::read_file(out() / "report.md");
  auto replace = [&md](const std::string& pattern, const std::string& with) {
    md = std::regex_replace(md, std::regex(pattern), with);
  };
  replace(dir_.path().string(), "<TMP>");
  // Whichever build folder ran it, as the rerun commands and the table's escaped text say it.
  for (std::string runner = REPLAY_RUNNER_PATH;
       const std::string& text : {runner, std::regex_replace(runner, std::regex("_"), R"(\_)")}) {
    for (std::size_t at = md.find(text); at != std::string::npos; at = md.find(text, at)) {
      md.replace(at, text.size(), "<RUNNER>");
    }
  }
  const fs::path source = fs::path(E2E_SUITES_DIR).parent_path().parent_path().parent_path();
  replace(source.string(), "<SOURCE>");
  replace(R"((\.\./)*\.\.<SOURCE>)", "<SOURCE>");  // links from <TMP>/out into the checkout
  if (run["project_commit"].is_string()) {
    const std::string commit = run["project_commit"];
    replace(commit, "<COMMIT>");
    replace(commit.substr(0, 12), "<COMMIT>");
  }
  replace(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)", "<TIME>");
  replace(R"(\| Host \| [^|]*\|)", "| Host | <HOST> |");
  replace(R"(\| Duration \| [^|]*\|)", "| Duration | <D> |");
  replace(R"(\b\d+\.\d s\b)", "<S> s");
  testing::expect_golden("report-cuda-branches.md.approved", md);
}

}  // namespace
}  // namespace devshim
