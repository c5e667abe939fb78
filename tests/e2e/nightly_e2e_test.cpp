// Nightly operations with the real runner binary on a purpose-made suite (suites/nightly): flaky
// tests found by --rerun-failures (unittest, pytest and GoogleTest: the reruns' processes count
// their own attempts), runner history, shards from Bazel and Kubernetes variables. The comparison
// with the previous run, --fail-on, shards merged, locks and prune, on recorded runs:
// tests/runner/cli/nightly_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/results/sqlite.h"
#include "runner/results/store.h"
#include "tests/support/report_json.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::find_case;
using testing::TempDir;
namespace fs = std::filesystem;

const fs::path kSuite = fs::path(E2E_SUITES_DIR) / "nightly";

class NightlyE2E : public ::testing::Test {
 protected:
  fs::path db() const { return dir_ / "results.db"; }

  // runner <suite> --db <db> --python <python> extra..., with env added.
  testing::RunResult runner(const std::vector<std::string>& extra,
                            std::map<std::string, std::string> env = {},
                            const fs::path& suite = kSuite) {
    std::vector<std::string> argv{RUNNER_PATH,   suite.string(), "--db",
                                  db().string(), "--python",     SUITE_PYTHON};
    argv.insert(argv.end(), extra.begin(), extra.end());
    env.emplace("NO_COLOR", "1");
    // Nothing from the environment of the test run may shard these runs.
    for (const char* v : {"TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX", "JOB_COMPLETION_INDEX",
                          "DEVSHIM_SHARD_TOTAL", "E2E_NIGHT", "E2E_FLAKY_DIR"}) {
      env.emplace(v, "");
    }
    return testing::run(argv, env, 120s);
  }
  // A runner subcommand (history, merge, prune, runs).
  testing::RunResult command(const std::vector<std::string>& args) {
    std::vector<std::string> argv{RUNNER_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::run(argv, {{"NO_COLOR", "1"}}, 120s);
  }
  json report(const fs::path& out) { return json::parse(testing::read_file(out / "report.json")); }
  TempDir dir_;
};

TEST_F(NightlyE2E, RerunFailuresFindsTheFlakyTestAndRerunsItAlone) {
  auto r = runner(
      {"test_flaky.py", "test_flip.py", "--out", (dir_ / "out").string(), "--rerun-failures", "2"},
      {{"E2E_FLAKY_DIR", dir_.path().string()}, {"E2E_NIGHT", "1"}});
  EXPECT_EQ(r.exit_code, 1) << r.output;  // test_flip still fails
  EXPECT_NE(r.output.find("runner: rerun 1 of 2: 2 failing files"), std::string::npos) << r.output;
  EXPECT_EQ(testing::read_file(dir_ / "test_sometimes.count"), "2");

  Store store(db());
  const RunRecord run = store.runs(1).at(0);
  std::map<std::string, FileRecord> files;
  for (auto& f : store.files(run.id)) files[f.path] = f;
  EXPECT_EQ(files.at("test_flaky.py").status, FileStatus::kPassed);
  EXPECT_NE(files.at("test_flaky.py").note.find("flaky"), std::string::npos);
  EXPECT_EQ(files.at("test_flip.py").status, FileStatus::kFailed);
  std::map<std::string, std::vector<std::string>> attempts;
  for (const auto& a : store.attempts(run.id)) {
    attempts[a.file + "::" + a.name].push_back(std::string(to_string(a.status)));
  }
  EXPECT_EQ(attempts["test_flaky.py::test_sometimes"],
            (std::vector<std::string>{"failed", "passed"}));
  EXPECT_EQ(attempts["test_flip.py::test_broken"],
            (std::vector<std::string>{"failed", "failed", "failed"}));
  EXPECT_EQ(attempts.count("test_flaky.py::test_other"), 0U);
  // The rerun ran the failing test alone.
  const std::string rerun_log = testing::read_file(dir_ / "out/reruns/attempt-2/test_flaky.py.log");
  EXPECT_NE(rerun_log.find("test_sometimes"), std::string::npos) << rerun_log;
  EXPECT_EQ(rerun_log.find("test_other"), std::string::npos) << rerun_log;

  json rep = report(dir_ / "out");
  json flaky = find_case(rep, "test_flaky.py", "test_sometimes");
  EXPECT_EQ(flaky["flaky"], true) << flaky;
  EXPECT_EQ(flaky["status"], "passed");
  ASSERT_EQ(flaky["attempts"].size(), 2U) << flaky;
  EXPECT_EQ(flaky["attempts"][0]["status"], "failed");
  EXPECT_NE(flaky["attempts"][0]["message"].get<std::string>().find("fails the first time"),
            std::string::npos);
  EXPECT_EQ(rep["flaky"].size(), 1U);
  EXPECT_EQ(find_case(rep, "test_flip.py", "test_broken")["flaky"], false);
  const std::string md = testing::read_file(dir_ / "out/report.md");
  EXPECT_NE(md.find("## Flaky tests"), std::string::npos);
  EXPECT_NE(md.find("failed → passed"), std::string::npos);

  // Its history says so.
  auto h = command({"history", "tests.test_flaky.Flaky::test_sometimes", "--db", db().string()});
  EXPECT_EQ(h.exit_code, 0) << h.output;
  EXPECT_NE(h.output.find("flaky (2 attempts)"), std::string::npos) << h.output;
  EXPECT_NE(h.output.find("timeline, oldest to newest: f"), std::string::npos) << h.output;
  // Flaky is not a new failure: the next run, where it passes at once, is green for new-failures.
  auto next =
      runner({"test_flaky.py", "--out", (dir_ / "next").string(), "--fail-on", "new-failures"},
             {{"E2E_FLAKY_DIR", dir_.path().string()}});
  EXPECT_EQ(next.exit_code, 0) << next.output;
  auto h2 = command({"history", "tests.test_flaky.Flaky.test_sometimes", "--db", db().string()});
  EXPECT_NE(h2.output.find("timeline, oldest to newest: fP"), std::string::npos) << h2.output;
  auto unknown = command({"history", "no.such::test", "--db", db().string()});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
}

TEST_F(NightlyE2E, PytestReruns) {
  auto r = runner({"test_flaky.py", "--out", (dir_ / "out").string(), "--rerun-failures", "1"},
                  {{"E2E_FLAKY_DIR", dir_.path().string()}}, kSuite / "pytest-suite.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string rerun_log = testing::read_file(dir_ / "out/reruns/attempt-2/test_flaky.py.log");
  EXPECT_NE(rerun_log.find("test_flaky.py::Flaky::test_sometimes PASSED"), std::string::npos)
      << rerun_log;
  EXPECT_EQ(rerun_log.find("test_other"), std::string::npos) << rerun_log;
  json c = find_case(report(dir_ / "out"), "test_flaky.py", "test_sometimes");
  EXPECT_EQ(c["flaky"], true) << c;
}

TEST_F(NightlyE2E, GtestRerunsTheFailingTestsThroughAFilter) {
  auto r =
      testing::run({RUNNER_PATH, (fs::path(E2E_SUITES_DIR) / "gtest").string(), "pass_test", "--db",
                    db().string(), "--out", (dir_ / "out").string(), "--rerun-failures", "1"},
                   {{"E2E_GTEST_ROOT", E2E_GTEST_ROOT}, {"NO_COLOR", "1"}}, 120s);
  EXPECT_EQ(r.exit_code, 1) << r.output;  // Basic.Fails fails every time
  EXPECT_NE(r.output.find("(1 by their failing tests alone)"), std::string::npos) << r.output;
  const std::string log = testing::read_file(dir_ / "out/reruns/attempt-2/pass_test.log");
  EXPECT_NE(log.find("Google Test filter = Basic.Fails"), std::string::npos) << log;
  EXPECT_EQ(log.find("Basic.Passes"), std::string::npos) << log;
  Store store(db());
  std::vector<int> attempts;
  for (const auto& a : store.attempts(store.runs(1).at(0).id)) {
    if (a.name == "Fails") attempts.push_back(a.attempt);
  }
  EXPECT_EQ(attempts, (std::vector<int>{1, 2}));
}

TEST_F(NightlyE2E, ShardsFromBazelAndKubernetesVariables) {
  auto list = [&](const std::vector<std::string>& extra, std::map<std::string, std::string> env) {
    std::vector<std::string> argv{RUNNER_PATH, kSuite.string(), "--db", db().string(), "--list"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const char* v :
         {"TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX", "JOB_COMPLETION_INDEX", "DEVSHIM_SHARD_TOTAL"}) {
      env.emplace(v, "");
    }
    return testing::run(argv, env, 30s);
  };
  auto first = list({"--shard", "1/2"}, {});
  auto second = list({"--shard", "2/2"}, {});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output, second.output);
  EXPECT_EQ(list({}, {{"TEST_TOTAL_SHARDS", "2"}, {"TEST_SHARD_INDEX", "1"}}).output,
            second.output);
  EXPECT_EQ(list({}, {{"JOB_COMPLETION_INDEX", "0"}, {"DEVSHIM_SHARD_TOTAL", "2"}}).output,
            first.output);
  EXPECT_EQ(list({"--shard-total", "2"}, {{"JOB_COMPLETION_INDEX", "1"}}).output, second.output);
  auto no_total = list({}, {{"JOB_COMPLETION_INDEX", "1"}});
  EXPECT_EQ(no_total.exit_code, 2);
  EXPECT_NE(no_total.output.find("DEVSHIM_SHARD_TOTAL"), std::string::npos) << no_total.output;
  EXPECT_EQ(list({"--shard", "3/2"}, {}).exit_code, 2);
  EXPECT_FALSE(fs::exists(db())) << "--list touches no database";
}

}  // namespace
}  // namespace devshim
