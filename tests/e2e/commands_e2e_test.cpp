// The commands around runs as a CI job or a new user meets them (issue 34): `compare` gates like
// a run and prints paths that work from anywhere, `devices` probes the Python a run would use,
// a mistyped command is named as one, and `runs -n 0` lists every run.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "tests/e2e/e2e_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::read_file;
using testing::write_file;
namespace fs = std::filesystem;

class CommandsE2E : public E2EFixture {
 protected:
  /// Runs argv in cwd; stdout and stderr together.
  testing::RunResult run_in(const fs::path& cwd, const std::vector<std::string>& argv) {
    const fs::path captured = dir_ / "run_in.out";
    auto child = testing::spawn(argv, {}, captured, cwd);
    auto status = testing::wait_for(child, 100s);
    testing::RunResult r;
    r.output = read_file(captured);
    if (status && WIFEXITED(*status)) r.exit_code = WEXITSTATUS(*status);
    return r;
  }
  /// Two runs of a one-test suite: the test passes in run 1 and fails in run 2.
  void record_a_regression() {
    const fs::path suite = dir_ / "flip";
    write_file(suite / "suite.json",
               R"({"name": "e2e-flip", "project_root": ".", "tests_dir": "tests",)"
               R"( "framework": "unittest"})");
    write_file(suite / "tests/test_flip.py",
               "import os\nimport unittest\n\n\nclass Flip(unittest.TestCase):\n"
               "    def test_flip(self):\n"
               "        self.assertNotIn('E2E_BREAK', os.environ)\n");
    for (const bool broken : {false, true}) {
      auto run_env = env();
      if (broken) run_env["E2E_BREAK"] = "1";
      auto r = testing::run(
          {RUNNER_PATH, suite.string(), "--db", db().string(), "--out",
           (dir_ / (broken ? "broken" : "fine")).string(), "--python", SUITE_PYTHON, "--no-shim"},
          run_env);
      ASSERT_EQ(r.exit_code, broken ? 1 : 0) << r.output;
    }
  }
};

TEST_F(CommandsE2E, CompareGatesOnARegressionWithPathsThatWorkFromAnywhere) {
  record_a_regression();
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  auto r = run_in(elsewhere, {RUNNER_PATH, "compare", "1", "2", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("runner: --fail-on regressions: 1 regression (1 regressed, 0 lost) "
                          "from run 1 to run 2, so exit 1"),
            std::string::npos)
      << r.output;
  // Back the other way it is a fix: nothing to gate on.
  r = run_in(elsewhere, {RUNNER_PATH, "compare", "2", "1", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_in(elsewhere,
             {RUNNER_PATH, "compare", "1", "2", "--fail-on", "any", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--fail-on any: run 2 failed, so exit 1"), std::string::npos) << r.output;
  r = run_in(elsewhere, {RUNNER_PATH, "compare", "1", "2", "--fail-on", "sometimes"});
  EXPECT_EQ(r.exit_code, 2) << r.output;

  // JSON on stdout: every local link is an absolute path to a file that is there.
  const fs::path json_out = dir_ / "compare.json.out";
  auto child = testing::spawn({RUNNER_PATH, "compare", "1", "2", "--json", "--db", db().string()},
                              {}, json_out, elsewhere);
  auto status = testing::wait_for(child, 100s);
  ASSERT_TRUE(status && WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 1);
  std::string text = read_file(json_out);
  text = text.substr(0, text.find("runner: --fail-on"));  // stderr's verdict follows the JSON
  const json j = json::parse(text);
  const std::string local = j["tests"]["regressed"][0]["links"]["local"];
  ASSERT_TRUE(fs::path(local).is_absolute()) << local;
  EXPECT_TRUE(fs::is_regular_file(local.substr(0, local.find("#L")))) << local;
  EXPECT_TRUE(fs::is_regular_file(j["b"]["reports"]["html"].get<std::string>())) << j["b"];

  // Written with -o: the files' absolute paths, links inside them relative to their folder.
  r = run_in(elsewhere, {RUNNER_PATH, "compare", "1", "2", "-o", "cmp", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find((elsewhere / "cmp/compare.json").string() + "\n"), std::string::npos)
      << r.output;
  const json written = json::parse(read_file(elsewhere / "cmp/compare.json"));
  EXPECT_EQ(written["b"]["reports"]["html"], "../../broken/report.html");
}

TEST_F(CommandsE2E, RunsDashNZeroListsEveryRun) {
  record_a_regression();
  auto r = testing::run({RUNNER_PATH, "runs", "-n", "0", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("no runs"), std::string::npos) << r.output;
  std::size_t rows = 0;
  for (std::size_t at = r.output.find("e2e-flip"); at != std::string::npos;
       at = r.output.find("e2e-flip", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 2U) << r.output;
  r = testing::run({RUNNER_PATH, "runs", "-n", "-1", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST_F(CommandsE2E, DevicesProbesThePythonOfTheCheckoutsVenv) {
  // A checkout with .venv (as ./setup.sh makes it), devices started in a folder below it.
  const fs::path checkout = dir_ / "checkout";
  fs::create_directories(checkout / ".venv/bin");
  fs::create_directories(checkout / "sub");
  fs::create_symlink(SUITE_PYTHON, checkout / ".venv/bin/python");
  auto r = run_in(checkout / "sub", {RUNNER_PATH, "devices", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(j["python"]["executable"], (checkout / ".venv/bin/python").string()) << j["python"];
  // --python with a slash is relative to where the runner started, as for a run.
  r = run_in(checkout, {RUNNER_PATH, "devices", (kSuites / "slow").string(), "--python",
                        ".venv/bin/python", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(json::parse(r.output.substr(r.output.find('{')))["python"]["executable"],
            (checkout / ".venv/bin/python").string());
}

TEST_F(CommandsE2E, AMistypedCommandIsNamedWithWhatItMayMean) {
  auto r = testing::run({RUNNER_PATH, "frobnicate"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("runner: error: unknown command 'frobnicate'; did you mean one of runs, "
                          "show,"),
            std::string::npos)
      << r.output;
  r = testing::run({RUNNER_PATH, "rnus", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'rnus'; did you mean 'runs'?"), std::string::npos)
      << r.output;
  // A folder of that name is a suite: the run's to judge.
  r = run_in(kSuites, {RUNNER_PATH, "slow", "--list"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("test_a_quick.py"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace devshim
