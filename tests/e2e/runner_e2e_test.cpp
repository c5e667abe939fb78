// The real runner binary on purpose-made suites (tests/e2e/suites): statuses of files that pass,
// fail, fail to import, hang, crash, flood and leave processes behind; no orphans; timeouts within
// the grace; SIGINT keeps finished results and exits 130; bad input exits 2 before anything runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "runner/results/store.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
namespace fs = std::filesystem;

class RunnerE2E : public E2EFixture {};

TEST_F(RunnerE2E, EveryFileGetsTheStatusOfHowItEnded) {
  auto r = run_runner("mixed", {"-j", "3", "--timeout", "2", "--kill-grace", "1"});
  ASSERT_EQ(r.exit_code, 1) << r.output;
  auto files = files_of_last_run();
  ASSERT_EQ(files.size(), 9U) << r.output;
  auto status = [&](const std::string& f) {
    return files.at(f).status ? std::string(to_string(*files.at(f).status)) : "not run";
  };
  EXPECT_EQ(status("test_pass.py"), "passed");
  EXPECT_EQ(status("test_fail.py"), "failed");
  EXPECT_EQ(status("test_import_error.py"), "error");
  EXPECT_EQ(status("test_hang.py"), "timeout");
  EXPECT_EQ(status("test_segv.py"), "crashed");
  EXPECT_EQ(files.at("test_segv.py").signal, SIGSEGV);
  EXPECT_EQ(status("test_flood.py"), "passed");
  EXPECT_EQ(status("test_grandchild.py"), "timeout");
  EXPECT_EQ(status("test_leftover.py"), "passed");
  EXPECT_EQ(status("sub/test_env.py"), "passed");

  // The timeout holds within the grace: SIGTERM at 2 s ends python at once.
  for (const char* f : {"test_hang.py", "test_grandchild.py"}) {
    EXPECT_GE(files.at(f).duration_s, 2.0) << f;
    EXPECT_LT(files.at(f).duration_s, 2.0 + 1.0 + 2.0) << f;
  }
  // Logs mirror the tests tree; the flood is all there.
  EXPECT_TRUE(fs::exists(out() / "logs/sub/test_env.py.log"));
  EXPECT_EQ(files.at("sub/test_env.py").log_path, "logs/sub/test_env.py.log");
  EXPECT_GE(fs::file_size(out() / "logs/test_flood.py.log"), 6U << 20);
  EXPECT_NE(testing::read_file(out() / "logs/test_fail.py.log").find("AssertionError"),
            std::string::npos);
  // The run log has a line per finished file.
  std::string run_log = testing::read_file(out() / "run.log");
  std::size_t finished = 0;
  for (std::size_t p = 0; (p = run_log.find("Finished test: ", p)) != std::string::npos; ++p) {
    ++finished;
  }
  EXPECT_EQ(finished, 9U) << run_log;
  EXPECT_NE(run_log.find("Finished test: test_segv.py - Status: crashed (RC: -11)"),
            std::string::npos)
      << run_log;
  // Two pid files (grandchild, leftover): neither process survives.
  EXPECT_EQ(testing::pids_in(pids()).size(), 2U);
  expect_no_survivors();

  Store store(db());
  auto run = store.runs(1).at(0);
  // Per-test results: every test of every file, the culprits of the killed ones included.
  std::map<std::string, const StoredCase*> cases;
  auto stored = store.cases(run.id);
  for (const auto& c : stored) cases[c.file + "::" + c.test.name] = &c;
  EXPECT_EQ(cases.at("test_pass.py::test_one")->test.status, CaseStatus::kPassed);
  const StoredCase* wrong = cases.at("test_fail.py::test_wrong");
  EXPECT_EQ(wrong->test.status, CaseStatus::kFailed);
  EXPECT_EQ(wrong->test.exception, "AssertionError");
  EXPECT_EQ(wrong->test.source.path, "tests/test_fail.py");
  EXPECT_EQ(wrong->test.source.line, 9);
  EXPECT_EQ(wrong->signature.size(), 16U);
  EXPECT_EQ(cases.at("test_hang.py::test_forever")->test.culprit, "timeout");
  // The timeout given, not the time the process took to die after it.
  EXPECT_NE(cases.at("test_hang.py::test_forever")->test.message.find("timeout of 2s"),
            std::string::npos)
      << cases.at("test_hang.py::test_forever")->test.message;
  EXPECT_EQ(files.at("test_hang.py").note, "killed after the timeout of 2s");
  EXPECT_EQ(cases.at("test_segv.py::test_segfault")->test.culprit, "crashed");
  EXPECT_EQ(cases.at("test_segv.py::test_segfault")->test.source.line, 8);
  EXPECT_EQ(run.status, "failed");
  EXPECT_EQ(run.mode, "shim");
  // The run ends by rendering its reports into its output folder.
  for (const char* report : {"report.md", "report.json", "junit.xml", "report.html"}) {
    EXPECT_TRUE(fs::exists(out() / report)) << report;
    EXPECT_NE(r.output.find(std::string("runner: report  ") + (out() / report).string()),
              std::string::npos)
        << report;
  }
  auto report_json = nlohmann::json::parse(testing::read_file(out() / "report.json"));
  EXPECT_EQ(report_json["summary"]["files_total"], 9);
  EXPECT_EQ(report_json["run"]["environment"]["python"].is_string(), true);
  EXPECT_EQ(run.suite, "e2e-mixed");
}

TEST_F(RunnerE2E, ShimModeAndBaselineGiveTheDocumentedEnvironment) {
  ASSERT_EQ(run_runner("mixed", {"sub"}).exit_code, 0);
  auto shim = nlohmann::json::parse(testing::read_file(pids() / "env-shim.json"));
  EXPECT_EQ(shim["ACTIVATE_TORCH_DEVICE"], "1");
  EXPECT_EQ(shim["PYTORCH_ENABLE_MPS_FALLBACK"], "1");
  // First on PYTHONPATH: the shim folder beside the runner (build/share/devshim/shim, a link to
  // the source tree's shim/python: install_layout.h).
  const std::string path = shim["PYTHONPATH"].get<std::string>();
  const fs::path first = path.substr(0, path.find(':'));
  EXPECT_EQ(first.filename(), "shim") << shim.dump();
  EXPECT_EQ(first.parent_path().filename(), "devshim") << shim.dump();
  EXPECT_TRUE(fs::equivalent(first, SHIM_DIR)) << shim.dump();
  EXPECT_EQ(shim["E2E_SUITE_VAR"], "from-suite");
  EXPECT_EQ(fs::path(shim["cwd"].get<std::string>()), kSuites / "mixed");
  EXPECT_EQ(shim["devshim_imported"], true);
  EXPECT_EQ(shim["stdin_read"], "");

  fs::remove_all(out());
  auto r = run_runner("mixed", {"tests/sub/test_env.py", "--no-shim"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto base = nlohmann::json::parse(testing::read_file(pids() / "env-baseline.json"));
  EXPECT_TRUE(base["ACTIVATE_TORCH_DEVICE"].is_null());
  EXPECT_EQ(base["devshim_imported"], false);
  EXPECT_EQ(Store(db()).runs(1).at(0).mode, "baseline");
}

TEST_F(RunnerE2E, ARelativePythonIsRelativeToWhereTheRunnerStarted) {
  const std::string rel = fs::relative(SUITE_PYTHON, fs::current_path()).string();
  ASSERT_NE(rel.find('/'), std::string::npos);
  auto r = testing::run({RUNNER_PATH, (kSuites / "mixed").string(), "test_pass.py", "--db",
                         db().string(), "--out", out().string(), "--python", rel},
                        env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(RunnerE2E, AFileThatFloodsPastTheLogLimitIsStoppedAndSaysWhy) {
  auto r = run_runner("mixed", {"test_flood.py", "--max-log-mb", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  auto files = files_of_last_run();
  EXPECT_EQ(files.at("test_flood.py").status, FileStatus::kCrashed);
  EXPECT_NE(files.at("test_flood.py").note.find("its log passed the size limit of 1 MiB"),
            std::string::npos)
      << files.at("test_flood.py").note;
  EXPECT_LE(fs::file_size(out() / "logs/test_flood.py.log"), 1U << 20);
}

TEST_F(RunnerE2E, UnknownTargetExits2BeforeAnythingRuns) {
  auto r = run_runner("mixed", {"test_pass.py", "no_such_folder"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown target \"no_such_folder\""), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(db()));
  EXPECT_FALSE(fs::exists(out()));
}

// Each bad number is one line naming the option and what it takes; nothing is created.
TEST_F(RunnerE2E, BadNumbersExit2InOneLineBeforeAnythingIsCreated) {
  const std::vector<std::vector<std::string>> cases = {
      {"--jobs", "-1"},           {"--jobs", "abc"},      {"--jobs", "99999999999999999999"},
      {"--timeout", "nan"},       {"--timeout", "abc"},   {"--timeout", "0"},
      {"--timeout", "inf"},       {"--kill-grace", "-1"}, {"--max-log-mb", "-5"},
      {"--rerun-failures", "-1"}, {"--shard-total", "0"}};
  for (const auto& bad : cases) {
    auto r = run_runner("mixed", {"test_pass.py", bad[0], bad[1]});
    EXPECT_EQ(r.exit_code, 2) << bad[0] << " " << bad[1] << ": " << r.output;
    EXPECT_EQ(r.output.find("runner: error: " + bad[0] + ": expected "), 0U) << r.output;
    EXPECT_NE(r.output.find("not \"" + bad[1] + "\""), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("179769"), std::string::npos) << "no DBL_MAX in full: " << r.output;
    EXPECT_FALSE(fs::exists(db())) << bad[0];
    EXPECT_FALSE(fs::exists(out())) << bad[0];
  }
  auto prune = testing::run({RUNNER_PATH, "prune", "--older-than", "abc", "--db", db().string()},
                            env(), 30s);
  EXPECT_EQ(prune.exit_code, 2) << prune.output;
  EXPECT_EQ(prune.output.find("runner: error: --older-than: expected a number of days"), 0U)
      << prune.output;
}

TEST_F(RunnerE2E, MalformedSuiteFileExits2NamingFileLineAndKey) {
  auto r = run_runner("broken", {});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find((kSuites / "broken/suite.json").string() + ":4: key \"timeout_s\""),
            std::string::npos)
      << r.output;
}

TEST_F(RunnerE2E, ASuiteFolderThatCannotBeReadIsNamedUnreadableNotMissing) {
  testing::write_file(dir_ / "locked/s/suite.json", R"({"name": "x", "project_root": "."})");
  std::vector<std::string> argv = as_unprivileged_user();
  ASSERT_EQ(::chmod((dir_ / "locked").c_str(), 0), 0);
  for (const std::string& arg : {std::string(RUNNER_PATH), (dir_ / "locked/s").string(),
                                 std::string("--db"), db().string()}) {
    argv.push_back(arg);
  }
  auto r = testing::run(argv, env(), 30s);
  ASSERT_EQ(::chmod((dir_ / "locked").c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0700), 0);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find((dir_ / "locked/s").string() + ": cannot read: Permission denied"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("no such suite file"), std::string::npos) << r.output;
}

TEST_F(RunnerE2E, MissingProjectRootExits2AndSaysWhichVariableToSet) {
  testing::write_file(
      dir_ / "s/suite.json",
      R"({"name": "x", "project_root": "nowhere", "project_root_env": "E2E_ROOT"})");
  auto r =
      testing::run({RUNNER_PATH, (dir_ / "s").string(), "--db", db().string()}, {{"E2E_ROOT", ""}});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("set E2E_ROOT"), std::string::npos) << r.output;
}

TEST_F(RunnerE2E, UnwritableOutputFolderExits2BeforeAnythingRuns) {
  testing::write_file(dir_ / "a-file", "");
  auto r = testing::run({RUNNER_PATH, (kSuites / "mixed").string(), "--db", db().string(), "--out",
                         (dir_ / "a-file/out").string(), "--python", SUITE_PYTHON},
                        env());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not writable"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(db()));
}

TEST_F(RunnerE2E, ListPrintsThePlanAndRunsNothing) {
  auto r = run_runner("mixed", {"--list", "sub", "test_pass.py"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "sub/test_env.py\ntest_pass.py\n");
  EXPECT_FALSE(fs::exists(db()));
}

TEST_F(RunnerE2E, SigintKillsTheRunningFilesKeepsFinishedResultsAndExits130) {
  auto child = testing::spawn(runner_argv("slow", {"-j", "2"}), env(), dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually(
      [&] {
        return testing::read_file(out() / "run.log").find("Finished test: test_a_quick.py") !=
                   std::string::npos &&
               testing::pids_in(pids()).size() == 2;
      },
      30s))
      << testing::read_file(dir_ / "runner.out");
  ::kill(child.pid, SIGINT);
  auto status = testing::wait_for(child, 20s);
  ASSERT_TRUE(status) << "runner did not stop after SIGINT";
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 130) << testing::read_file(dir_ / "runner.out");

  auto files = files_of_last_run();
  ASSERT_EQ(files.size(), 4U);
  EXPECT_EQ(files.at("test_a_quick.py").status, FileStatus::kPassed);
  EXPECT_EQ(files.at("test_b_slow.py").status, FileStatus::kInterrupted);
  EXPECT_EQ(files.at("test_c_slow.py").status, FileStatus::kInterrupted);
  EXPECT_FALSE(files.at("test_d_slow.py").status) << "never started: not run";
  EXPECT_EQ(Store(db()).runs(1).at(0).status, "interrupted");
  expect_no_survivors();
  // The tests that were running are recorded as the culprits.
  std::size_t culprits = 0;
  for (const auto& c : Store(db()).cases(Store(db()).runs(1).at(0).id)) {
    if (c.test.culprit == "interrupted") ++culprits;
  }
  EXPECT_EQ(culprits, 2U);
}

TEST_F(RunnerE2E, SigtermIsAnInterruptToo) {
  auto child = testing::spawn(runner_argv("slow", {"-j", "1", "test_b_slow.py"}), env(),
                              dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually([&] { return testing::pids_in(pids()).size() == 1; }, 30s));
  ::kill(child.pid, SIGTERM);
  auto status = testing::wait_for(child, 20s);
  ASSERT_TRUE(status && WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 143);  // 128 + SIGTERM
  expect_no_survivors();
}

TEST_F(RunnerE2E, ARunnerKilledWithSigkillLeavesARunTheNextCommandMarksInterrupted) {
  auto child = testing::spawn(runner_argv("slow", {"-j", "1"}), env(), dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually(
      [&] {
        return testing::read_file(out() / "run.log").find("Finished test: test_a_quick.py") !=
                   std::string::npos &&
               testing::pids_in(pids()).size() == 1;
      },
      30s));
  ::kill(child.pid, SIGKILL);
  testing::wait_for(child, 10s);
  // The test process dies with the runner (PR_SET_PDEATHSIG); what it spawned is killed by the
  // runner's watchdog (runner/engine/process_reaper.h).
  expect_no_survivors();

  auto r = testing::run({RUNNER_PATH, "runs", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 passed"), std::string::npos) << r.output;
  auto files = files_of_last_run();
  EXPECT_EQ(files.at("test_a_quick.py").status, FileStatus::kPassed);
}

// The bundled suite with --differential: CUDA-style tests fail or skip without the shim and pass
// with it (unlocked); tests that need no CUDA pass both ways (compatible), as do those that pick
// CUDA when it is available (CUDA branches that pass); nothing regresses.
TEST_F(RunnerE2E, DifferentialRunOfTheBundledSuiteClassifiesEveryTest) {
  const std::string suite = (fs::path(BUNDLED_SUITES_DIR) / "cuda-idioms").string();
  // Three of its files keep this test quick; ./run.sh runs them all.
  auto r = testing::run({RUNNER_PATH, suite, "test_activation.py", "test_cuda_api.py",
                         "test_device_logic.py", "--differential", "--db", db().string(), "--out",
                         out().string(), "--python", TORCH_PYTHON, "-j", "2"},
                        env(), 300s);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Store store(db());
  auto runs = store.runs(2);
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_EQ(runs[0].mode, "shim");
  EXPECT_EQ(runs[1].mode, "baseline");
  EXPECT_EQ(runs[0].baseline_run, runs[1].id);
  EXPECT_TRUE(fs::exists(out() / "baseline/report.md"));

  auto report = nlohmann::json::parse(testing::read_file(out() / "report.json"));
  const auto& d = report["differential"];
  EXPECT_EQ(d["baseline_run"], runs[1].id);
  EXPECT_EQ(d["counts"].value("regression", 0), 0);
  // Compatible: the fallback variable, the count logic (it only asks). CUDA branches that pass:
  // "cuda if available else cpu" and torch.device's fallback, which place their work on CUDA
  // under the shim and on the CPU without it.
  EXPECT_EQ(d["counts"].value("compatible", 0), 2) << d.dump();
  EXPECT_EQ(d["counts"].value("cuda_branch_passed", 0), 2) << d.dump();
  EXPECT_EQ(d["counts"].value("unlocked", 0), 14) << d.dump();
  const std::string md = testing::read_file(out() / "report.md");
  EXPECT_LT(md.find("## Differential"), md.find("## Summary"));
  EXPECT_NE(testing::read_file(out() / "report.html").find("id=\"differential\""),
            std::string::npos);

  // The same comparison against the recorded baseline, without running it again.
  fs::remove_all(out());
  auto again =
      testing::run({RUNNER_PATH, suite, "test_activation.py", "test_cuda_api.py",
                    "test_device_logic.py", "--baseline", std::to_string(runs[1].id), "--db",
                    db().string(), "--out", out().string(), "--python", TORCH_PYTHON},
                   env(), 300s);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(Store(db()).runs(1).at(0).baseline_run, runs[1].id);
  auto bad = testing::run({RUNNER_PATH, suite, "--baseline", std::to_string(runs[0].id), "--db",
                           db().string(), "--python", TORCH_PYTHON},
                          env(), 60s);
  EXPECT_EQ(bad.exit_code, 2) << "a shim run is no baseline";
}

TEST_F(RunnerE2E, VersionAndUsageErrors) {
  auto v = testing::run({RUNNER_PATH, "--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.output.rfind("runner ", 0), 0U) << v.output;
  auto short_v = testing::run({RUNNER_PATH, "-V"});
  EXPECT_EQ(short_v.exit_code, 0) << short_v.output;
  EXPECT_EQ(short_v.output, v.output) << "-V is --version";
  auto bad = testing::run({RUNNER_PATH, "--no-such-option"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  // --help says what the exit codes mean and which variables the runner reads.
  auto help = testing::run({RUNNER_PATH, "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.output;
  for (const char* needed : {"Exit codes: 0 every file passed", "130, 143, 129 interrupted",
                             "DEVSHIM_DB", "DEVSHIM_OUT", "--heartbeat"}) {
    EXPECT_NE(help.output.find(needed), std::string::npos) << needed << "\n" << help.output;
  }
}

}  // namespace
}  // namespace devshim
