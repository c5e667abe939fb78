// The API gap log on the runner's command line: tests/e2e/suites/gaps, a suite whose tests hit
// torch APIs the shim does not carry, its test processes replayed (tests/support/replay_run.h);
// `runner gaps` reads what the runs recorded. `runner gaps scan`, which asks torch itself, is
// tested end to end (tests/e2e/gaps_scan_e2e_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "runner/results/gap_log.h"
#include "runner/results/store.h"
#include "tests/support/replay_run.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

// The recording of a run of the gaps suite's target: "gaps/<target>[-<kind>]".
std::string recording_name(std::string target, const std::string& kind) {
  for (char& c : target) c = (c == ':' || c == '.') ? '_' : c;
  return "gaps/" + target + (kind.empty() ? "" : "-" + kind);
}

class Gaps : public ::testing::Test {
 protected:
  fs::path db() const { return dir_.path() / "results.db"; }
  fs::path out() const { return dir_.path() / "out"; }

  // One shim run of the given file of the gaps suite; fixed=true: the gap is gone.
  void run_suite(const std::string& file, bool fixed) {
    auto r = testing::replay_run(
        recording_name(file, fixed ? "fixed" : ""), out(),
        {(fs::path(E2E_SUITES_DIR) / "gaps").string(), file, "--db", db().string(), "--out",
         out().string(), "--python", TEST_PYTHON, "-j", "1"},
        {{"E2E_GAP_FIXED", fixed ? "1" : "0"}});
    ASSERT_EQ(r.exit_code, fixed ? 0 : 1) << r.output;
  }
  // One differential run (without the shim, then with it) of the given file of the gaps suite.
  testing::RunResult run_differential(const std::string& file) {
    return testing::replay_run(
        recording_name(file, "differential"), out(),
        {(fs::path(E2E_SUITES_DIR) / "gaps").string(), file, "--differential", "--db",
         db().string(), "--out", out().string(), "--python", TEST_PYTHON, "-j", "1"});
  }
  testing::RunResult gaps(const std::vector<std::string>& args) {
    std::vector<std::string> all{"gaps"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--db", db().string()});
    return testing::replay_command(all);
  }
  std::optional<GapEntry> entry(const std::string& api) {
    Store store(db());
    return GapLog(store).entry(api);
  }
  TempDir dir_;
};

TEST_F(Gaps, AnApiTheShimMissesIsExactlyTheGapAndFixingItMarksItFixed) {
  ASSERT_NO_FATAL_FAILURE(run_suite("test_torch_gap.py", false));
  {
    Store store(db());
    auto all = GapLog(store).list();
    ASSERT_EQ(all.size(), 1U) << "only the missing API is a gap";
    EXPECT_EQ(all[0].api, "torch._C._cuda_tunableop_is_enabled");
    EXPECT_EQ(all[0].kind, "failing");
    EXPECT_EQ(all[0].status, "open");
    EXPECT_EQ(all[0].tests, 1);
  }
  auto shown = gaps({"show", "torch._C._cuda_tunableop_is_enabled"});
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("tests/test_torch_gap.py::test_tunableop"), std::string::npos)
      << shown.output;

  // The report of the run lists it.
  auto report = nlohmann::json::parse(testing::read_file(dir_.path() / "out" / "report.json"));
  ASSERT_EQ(report["gaps"].size(), 1U);
  EXPECT_EQ(report["gaps"][0]["api"], "torch._C._cuda_tunableop_is_enabled");
  EXPECT_EQ(report["gaps"][0]["tests"], 1);
  const std::string md = testing::read_file(dir_.path() / "out" / "report.md");
  EXPECT_NE(md.find("## Gaps"), std::string::npos);
  EXPECT_NE(md.find("| torch.\\_C.\\_cuda\\_tunableop\\_is\\_enabled | failing | open | low | 1 |"),
            std::string::npos)
      << md;
  const std::string html = testing::read_file(dir_.path() / "out" / "report.html");
  EXPECT_NE(html.find("<section id=\"gaps\">"), std::string::npos);

  ASSERT_NO_FATAL_FAILURE(run_suite("test_torch_gap.py", true));
  auto fixed = entry("torch._C._cuda_tunableop_is_enabled");
  ASSERT_TRUE(fixed);
  EXPECT_EQ(fixed->status, "fixed");
  EXPECT_EQ(fixed->fixed_in_run, 2);

  ASSERT_NO_FATAL_FAILURE(run_suite("test_torch_gap.py", false));
  EXPECT_EQ(entry("torch._C._cuda_tunableop_is_enabled")->status, "open")
      << "it came back: reopened";
}

TEST_F(Gaps, BrokenBothFailuresAreAttributedLikeRegressions) {
  // Both tests fail with and without the shim (broken_both): neither is a regression. The
  // identity assertion is the named gap; the plain assertion points nowhere into torch and is
  // an unattributed entry, named by its normalized message.
  auto r = run_differential("test_identity_gap.py");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  Store store(db());
  auto all = GapLog(store).list();
  std::map<std::string, std::vector<std::string>> tests;
  for (const auto& e : all) {
    auto full = GapLog(store).entry(e.api);
    ASSERT_TRUE(full);
    for (const auto& t : full->test_list) tests[e.api].push_back(t.name);
  }
  EXPECT_EQ(tests["tensor.device identity"], std::vector<std::string>{"test_device_identity"});
  EXPECT_EQ(tests["unattributed AssertionError: assert <n> == <n>"],
            std::vector<std::string>{"test_plain_assertion"});
  EXPECT_EQ(all.size(), 2U) << "every failing test is evidence of one entry";
  auto listed = gaps({"list"});
  EXPECT_NE(listed.output.find("tensor.device identity"), std::string::npos) << listed.output;
}

TEST_F(Gaps, AFailureInACudaOnlyBranchIsNamedSo) {
  // The test passes without the shim (its `if torch.cuda.is_available():` body never runs) and
  // fails with it: a CUDA-branch failure, not a regression, whose entry says where the code the
  // baseline never ran is.
  auto r = run_differential("test_cuda_branch_gap.py");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  Store store(db());
  auto all = GapLog(store).list();
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].api, "unattributed AssertionError in a CUDA-only branch: assert <n> == <n>");
  EXPECT_EQ(all[0].kind, "unattributed");
  EXPECT_NE(all[0].why.find("tests/test_cuda_branch_gap.py:11"), std::string::npos) << all[0].why;
  const std::string md = testing::read_file(dir_.path() / "out" / "report.md");
  EXPECT_NE(md.find("| regression | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| cuda_branch_failed | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("run the test where CUDA is"), std::string::npos) << md;
}

TEST_F(Gaps, AStrictXfailThatPassesIsNamedByWhatItExpected) {
  // One regression (the mark holds only where CUDA is, and the baseline passed it) and one test
  // the baseline skipped; both "[XPASS(strict)]" under the shim.
  auto r = run_differential("test_strict_xfail_gap.py");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  Store store(db());
  std::map<std::string, GapEntry> by_api;
  for (GapEntry& e : GapLog(store).list()) by_api.emplace(e.api, std::move(e));
  ASSERT_EQ(by_api.size(), 2U) << r.output;
  ASSERT_TRUE(by_api.contains("strict xfail passed"));
  EXPECT_EQ(by_api.at("strict xfail passed").tests, 1);
  ASSERT_TRUE(by_api.contains("cross-device error expected"));
  EXPECT_EQ(by_api.at("cross-device error expected").tests, 1);
  const std::string md = testing::read_file(dir_.path() / "out" / "report.md");
  EXPECT_NE(md.find("| regression | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("none for the shim: the test is marked to fail"), std::string::npos) << md;
}

TEST_F(Gaps, BadInputExits2AndExportWritesAStatusPage) {
  EXPECT_EQ(gaps({"list"}).exit_code, 2) << "no database yet";
  ASSERT_NO_FATAL_FAILURE(run_suite("test_fast_gap.py", false));
  EXPECT_EQ(gaps({"show", "torch.nothing"}).exit_code, 2);
  EXPECT_EQ(gaps({"set", "torch.x", "--status", "maybe"}).exit_code, 2);
  EXPECT_EQ(gaps({"export", "--format", "xml"}).exit_code, 2);
  auto md = gaps({"export", "--format", "md"});
  ASSERT_EQ(md.exit_code, 0) << md.output;
  EXPECT_NE(md.output.find("| `torch._C._cuda_e2e_binding` | failing | open |"), std::string::npos)
      << md.output;
  auto json = gaps({"export", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0);
  auto j = nlohmann::json::parse(json.output);
  ASSERT_EQ(j.size(), 2U) << "the binding and the unattributed assertion";
  for (const auto& e : j) EXPECT_EQ(e["tests"], 1) << e.dump();
}

TEST_F(Gaps, ARerunOfOneTestKeepsTheEntrysOtherTests) {
  const std::string api = "torch._C._cuda_e2e_pair";
  ASSERT_NO_FATAL_FAILURE(run_suite("test_one_gap_twice.py", false));
  EXPECT_EQ(entry(api)->tests, 2);
  ASSERT_NO_FATAL_FAILURE(run_suite("test_one_gap_twice.py::test_first", false));
  EXPECT_EQ(entry(api)->tests, 2) << "test_second was not run again: still affected";
  EXPECT_EQ(entry(api)->last_seen_run, 2);
  auto shown = gaps({"show", api});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("tests     2 in 1 file (run 2)"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("tests/test_one_gap_twice.py::test_first\n"), std::string::npos)
      << shown.output;
  EXPECT_NE(shown.output.find("tests/test_one_gap_twice.py::test_second  (last run in run 1)"),
            std::string::npos)
      << shown.output;
  // The re-run's own report counts the one test it ran.
  auto report = nlohmann::json::parse(testing::read_file(dir_.path() / "out" / "report.json"));
  ASSERT_EQ(report["gaps"].size(), 1U);
  EXPECT_EQ(report["gaps"][0]["tests"], 1);
}

TEST_F(Gaps, AMergedRunHasTheGapsOfItsShards) {
  ASSERT_NO_FATAL_FAILURE(run_suite("test_torch_gap.py", false));
  const fs::path all = dir_.path() / "all.db";
  auto m = testing::replay_command(
      {"merge", db().string(), "--into", all.string(), "--out", (dir_.path() / "merged").string()});
  ASSERT_EQ(m.exit_code, 1) << m.output;
  Store store(all);
  auto merged = GapLog(store).list();
  ASSERT_EQ(merged.size(), 1U) << "the merged database's gap log is updated from its run";
  EXPECT_EQ(merged[0].api, "torch._C._cuda_tunableop_is_enabled");
  EXPECT_EQ(merged[0].tests, 1);
  auto report = nlohmann::json::parse(testing::read_file(dir_.path() / "merged" / "report.json"));
  EXPECT_EQ(report["gaps"].size(), 1U);
}

}  // namespace
}  // namespace devshim
