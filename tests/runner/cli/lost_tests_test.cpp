// Tests that vanish under the shim, on the runner's command line with the test processes of
// tests/e2e/suites/ replayed (tests/support/replay_run.h): shim-import-error, a suite whose
// conftest imports fine without the shim and fails to import with it, so that every file of the
// shim run reports no test. Every place a person reads (the report, `runner runs`, `runner
// show`, --fail-on, run.log, the gap log) names the lost tests and the exception; the runner used
// to say "0 regressions". Renumbered and uniquified cases are compared, not lost. And
// --try-settings on the gaps suite: the setting an identity failure's action names, tried on its
// test.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "runner/results/gap_log.h"
#include "runner/results/store.h"
#include "tests/support/replay_run.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

constexpr const char* kError = "TypeError: the shim's device object cannot be scripted";

class LostTests : public ::testing::Test {
 protected:
  fs::path db() const { return dir_.path() / "results.db"; }
  fs::path out() const { return dir_.path() / "out"; }
  // A command that starts no test process.
  testing::RunResult runner(std::vector<std::string> args) {
    args.insert(args.end(), {"--db", db().string()});
    return testing::replay_command(args);
  }
  // The purpose-made suite of tests/e2e/suites/, with and without the shim, failing on
  // regressions: its recorded processes replayed.
  testing::RunResult differential(const char* suite) {
    return testing::replay_run(
        suite, out(),
        {(fs::path(E2E_SUITES_DIR) / suite).string(), "--differential", "--fail-on", "regressions",
         "--out", out().string(), "--python", TEST_PYTHON, "-j", "1", "--db", db().string()});
  }
  // The shim run's report.json and report.md.
  nlohmann::json report_json() const {
    return nlohmann::json::parse(testing::read_file(out() / "report.json"));
  }
  std::string report_md() const { return testing::read_file(out() / "report.md"); }
  TempDir dir_;
};

// Files that fail to import both ways: the baseline passed nothing, so nothing was compared,
// and neither the terminal, the report nor --fail-on regressions may read as "no regression".
TEST_F(LostTests, ABaselineThatPassedNothingComparesNothing) {
  auto r = differential("missing-dependency");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("against baseline run 1: nothing compared (the baseline passed no "
                          "test), 0 unlocked"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("0 regressions"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--fail-on regressions: nothing compared (baseline run 1 passed no "
                          "test), so the run's own exit 1"),
            std::string::npos)
      << r.output;
  const std::string md = report_md();
  EXPECT_NE(md.find("Nothing compared: baseline run 1 passed no test"), std::string::npos) << md;
  EXPECT_EQ(md.find("None: every test"), std::string::npos) << md;
  const auto json = report_json();
  EXPECT_EQ(json["differential"]["baseline_passed"], 0);
  auto runs = runner({"runs"});
  EXPECT_NE(runs.output.find("   -    -    0      -  2 error"), std::string::npos)
      << "reg and cbfail are -, not 0\n"
      << runs.output;
}

// parameterized.expand renumbers cases when the shim adds a cuda case to a list: the baseline's
// test_scale_1_sum_cpu is the shim run's test_scale_2_sum_cpu, compared, not lost.
TEST_F(LostTests, ARenumberedCaseIsComparedNotLost) {
  auto r = differential("renumbered");
  // test_place's two cuda cases fail (their device type is the device used): renumbered, not
  // regressions.
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("against baseline run 1: 0 regressions (0 failing, 0 lost), 0 unlocked, "
                          "2 new under the shim (2 pass)"),
            std::string::npos)
      << r.output;
  const auto json = report_json();
  EXPECT_EQ(json["differential"]["counts"]["compatible"], 2) << json["differential"].dump(1);
  EXPECT_FALSE(json["differential"]["counts"].contains("lost"));
  // test_place_0..1 without the shim, _0.._3 with it: the same names are other cases, so none
  // is compared, and none is unlocked either.
  EXPECT_EQ(json["differential"]["counts"]["renumbered"], 4);
  EXPECT_EQ(json["differential"]["renumbered_failing"], 2);
  const std::string md = report_md();
  EXPECT_NE(md.find("4 tests of this run are renumbered parameterized cases, not compared with "
                    "the baseline one by one (which case is which cannot be told from their "
                    "names); 2 of them fail. Their counts prove none of them a regression"),
            std::string::npos)
      << md;
  EXPECT_EQ(json["differential"]["renumbered_regressions"], 0);
  // The two cuda cases exist only under the shim: new, not unlocked.
  EXPECT_TRUE(json["differential"]["unlocked"].empty());
  EXPECT_EQ(json["differential"]["counts"]["new_passed"], 2);
  std::set<std::string> on_the_path;
  for (const auto& f : json["files"]) {
    for (const auto& t : f["cases"]) {
      if (t["diff_class"] == "new_passed") on_the_path.insert(t["name"]);
    }
  }
  EXPECT_EQ(on_the_path,
            (std::set<std::string>{"test_scale_1_none_cuda", "test_scale_3_sum_cuda"}));
}

// A renumbered group where more cases fail under the shim than it added and the baseline failed:
// the difference are regressions, counted (and failing --fail-on regressions) though unnamed.
TEST_F(LostTests, RenumberedCasesCountTheRegressionsTheyMustHold) {
  auto r = differential("renumbered-regressions");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("against baseline run 1: 2 regressions (0 failing, 0 lost, at least 2 "
                          "renumbered), 0 unlocked"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--fail-on regressions: 0 failing and at least 2 among renumbered "
                          "cases against baseline run 1, so exit 1"),
            std::string::npos)
      << r.output;
  const auto json = report_json();
  const auto& d = json["differential"];
  EXPECT_EQ(d["counts"]["renumbered"], 12) << d.dump(1);
  EXPECT_FALSE(d["counts"].contains("lost")) << "pytest's [zeros-device1] is renumbered, not lost";
  EXPECT_EQ(d["renumbered_failing"], 8);
  EXPECT_EQ(d["renumbered_regressions"], 2)
      << "test_sees: 4 fail, 2 added; test_place and test_made_on: none";
  const std::string md = report_md();
  for (const char* said :
       {"No test compared one by one fails that passed without the shim, but renumbered cases "
        "hold at least 2 regressions (below).",
        "At least 2 of them are regressions: in their groups, more of the baseline's cases "
        "passed than this run's cases do not fail, so as many of those fail now or are gone. "
        "They count as regressions, also with --fail-on regressions."}) {
    EXPECT_NE(md.find(said), std::string::npos) << said << "\n" << md;
  }
  EXPECT_EQ(md.find("None: every test that passed"), std::string::npos) << md;
  auto runs = runner({"runs"});  // runs.summary's regressions count them too
  EXPECT_NE(runs.output.find("33.3%    -    2    0      0  2 failed"), std::string::npos)
      << runs.output;
}

// pytest makes colliding ids unique: under the shim a [cpu, cuda] device list prints "cpu" twice
// (torch.device("cuda") built as the CPU's), so each baseline case [cpu] is [cpu0] and [cpu1]
// (BackPACK: 1,641 "lost" and as many "unlocked" before). Occurrence 0 is the baseline's case,
// compared (test_without_the_shim's regression is named), the others are new under the shim, and
// none is lost. An id naming an object's address (another in each process) is the same case.
TEST_F(LostTests, CasesPytestMadeUniqueAreComparedOrNewNotLost) {
  auto r = differential("unique-ids");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("against baseline run 1: 1 regression (1 failing, 0 lost), 0 unlocked, "
                          "6 new under the shim (5 pass)"),
            std::string::npos)
      << r.output;
  const auto json = report_json();
  const auto& d = json["differential"];
  EXPECT_EQ(
      d["counts"],
      (nlohmann::json{{"compatible", 6}, {"regression", 1}, {"new_passed", 5}, {"new_failed", 1}}))
      << d.dump(1);
  ASSERT_EQ(d["regressions"].size(), 1U);
  EXPECT_EQ(d["regressions"][0]["name"], "test_without_the_shim[cpu0]");
  ASSERT_EQ(d["new_failed"].size(), 1U);
  EXPECT_EQ(d["new_failed"][0]["name"], "test_without_the_shim[cpu1]");
  EXPECT_EQ(d["baseline_passed"], 7);
  EXPECT_EQ(d["renumbered_regressions"], 0);
}

TEST_F(LostTests, AShimOnlyImportErrorIsFiveRegressionsNotZero) {
  auto r = differential("shim-import-error");
  // The baseline passes 4 tests and skips 1; the shim run reports none of them.
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("against baseline run 1: 5 regressions (0 failing, 5 lost)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--fail-on regressions: 0 failing and 5 lost tests"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(std::string("error test_first.py (")), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(kError), std::string::npos) << "on the terminal too";

  const std::string md = report_md();
  EXPECT_EQ(md.find("None: every test that passed without the shim passes with it."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| lost | 5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("tests/test\\_first.py::test\\_double | passed → absent"), std::string::npos)
      << md;
  EXPECT_NE(md.find("## File errors"), std::string::npos) << md;
  EXPECT_NE(md.find("| test\\_first.py | error | TypeError: the shim's device object cannot be "
                    "scripted | tests/helpers.py:8 in \\_import\\_optimizers"),
            std::string::npos)
      << md;
  const auto json = report_json();
  EXPECT_EQ(json["differential"]["counts"]["lost"], 5);
  EXPECT_EQ(json["differential"]["lost"].size(), 5U);
  EXPECT_EQ(json["differential"]["baseline_passed"], 4);
  const std::string html = testing::read_file(out() / "report.html");
  EXPECT_NE(html.find("<section id=\"file-errors\">"), std::string::npos);
  const std::string junit = testing::read_file(out() / "junit.xml");
  EXPECT_NE(junit.find("type=\"lost\""), std::string::npos);
  const std::string log = testing::read_file(out() / "run.log");
  EXPECT_NE(log.find(std::string("File error: test_second.py: ") + kError), std::string::npos)
      << log;

  auto runs = runner({"runs"});
  EXPECT_NE(runs.output.find("   -    5    5      0  2 error"), std::string::npos) << runs.output;
  auto show = runner({"show", "latest"});
  EXPECT_NE(show.output.find(std::string("error: ") + kError), std::string::npos) << show.output;
  EXPECT_NE(
      show.output.find("  lost      tests/test_first.py::test_double  (passed in baseline run 1)"),
      std::string::npos)
      << show.output;
  EXPECT_NE(show.output.find("lost:  5 tests of baseline run 1 missing from this run"),
            std::string::npos)
      << show.output;

  // The gap log: one file error entry, naming both files and what each lost.
  Store store(db());
  const auto entries = GapLog(store).for_run(2);
  ASSERT_EQ(entries.size(), 1U);
  EXPECT_EQ(entries[0].api, std::string("file error: ") + kError);
  EXPECT_EQ(entries[0].kind, "file_error");
  EXPECT_EQ(lost_by_file(entries[0]),
            (std::map<std::string, int>{{"test_first.py", 3}, {"test_second.py", 2}}));
  EXPECT_FALSE(entries[0].action.empty());
  auto gaps = runner({"gaps", "show", std::string("file error: ") + kError});
  EXPECT_NE(gaps.output.find("test_first.py lost 3 tests of the baseline"), std::string::npos)
      << gaps.output;
}

// test_identity_gap.py fails under TORCHDEVICE_DEVICE_OBJECTS=keep (the gaps suite's setting):
// its entry's action is redirect, which --try-settings runs, and it passes there. Its plain
// assertion names nothing: the other device-object setting is tried on it too, and fails there.
TEST_F(LostTests, TryingTheSuggestedSettingRecordsHowManyItFixes) {
  auto r =
      testing::replay_run("gaps-try-settings", out(),
                          {(fs::path(E2E_SUITES_DIR) / "gaps").string(), "test_identity_gap.py",
                           "--differential", "--try-settings", "--out", out().string(), "--python",
                           TEST_PYTHON, "-j", "1", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("runner: trying TORCHDEVICE_DEVICE_OBJECTS=redirect: 2 tests of 2 "
                          "gap-log entries, in 1 file"),
            std::string::npos)
      << r.output;
  Store store(db());
  auto identity = GapLog(store).entry("tensor.device identity");
  ASSERT_TRUE(identity);
  EXPECT_EQ(identity->setting, "TORCHDEVICE_DEVICE_OBJECTS=redirect");
  EXPECT_EQ(identity->trial.setting, "TORCHDEVICE_DEVICE_OBJECTS=redirect");
  EXPECT_EQ(identity->trial.tests, 1);
  EXPECT_EQ(identity->trial.passed, 1);
  EXPECT_TRUE(fs::exists(out() / "trials" / "TORCHDEVICE_DEVICE_OBJECTS=redirect" /
                         "test_identity_gap.py.log"));
  auto plain = GapLog(store).entry("unattributed AssertionError: assert <n> == <n>");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->setting, "TORCHDEVICE_DEVICE_OBJECTS=redirect");
  EXPECT_EQ(plain->trial.tests, 1);
  EXPECT_EQ(plain->trial.passed, 0);
  for (const GapEntry& e : GapLog(store).for_run(2)) EXPECT_FALSE(e.action.empty()) << e.api;
  const std::string md = report_md();
  EXPECT_NE(md.find("TORCHDEVICE\\_DEVICE\\_OBJECTS=redirect: 1 of 1 pass (run 2)"),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace devshim
