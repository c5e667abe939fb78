// The runner as a nightly job sees it (issue 19): output that reaches a pipe or a file as it
// happens, a heartbeat for long files, resuming with the run's own options, history that copies of
// a database cannot damage, read-only databases, names that would drive a terminal, and the
// project's database found from the checkout.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/results/store.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using testing::read_file;
using testing::write_file;
namespace fs = std::filesystem;

class OperationE2E : public E2EFixture {
 protected:
  /// Runs the runner as spawn does, with cwd; returns exit code and output.
  testing::RunResult run_in(const fs::path& cwd, const std::vector<std::string>& argv,
                            const std::map<std::string, std::string>& env) {
    const fs::path out = dir_ / "run_in.out";
    auto child = testing::spawn(argv, env, out, cwd);
    auto status = testing::wait_for(child, 100s);
    testing::RunResult r;
    r.output = read_file(out);
    if (status && WIFEXITED(*status)) r.exit_code = WEXITSTATUS(*status);
    return r;
  }
  /// A one-file unittest suite in dir_/name whose test puts a tensor "on cuda".
  fs::path cuda_suite(const std::string& name) {
    const fs::path suite = dir_ / name;
    write_file(suite / "suite.json", "{\"name\": \"e2e-" + name +
                                         "\", \"project_root\": \".\", \"tests_dir\": \"tests\", "
                                         "\"framework\": \"unittest\"}");
    write_file(suite / "tests/test_cuda.py",
               "import unittest\nimport torch\n\n\nclass T(unittest.TestCase):\n"
               "    def test_zeros(self):\n"
               "        self.assertEqual(torch.zeros(2, device=\"cuda\").sum().item(), 0)\n");
    return suite;
  }
};

TEST_F(OperationE2E, ProgressReachesAFileAsItHappensWithAHeartbeatForALongFile) {
  // stdout is a file, as under cron, CI or `| tee`: nothing may wait in a buffer for the end.
  auto child = testing::spawn(runner_argv("slow", {"--no-shim", "-j", "1", "--heartbeat", "1",
                                                   "test_a_quick.py", "test_b_slow.py"}),
                              env(), dir_ / "runner.out");
  const bool seen = testing::eventually(
      [&] {
        const std::string text = read_file(dir_ / "runner.out");
        return text.find("[1/2] passed test_a_quick.py") != std::string::npos &&
               text.find("[1/2] still running: test_b_slow.py (0:0") != std::string::npos;
      },
      60s);
  EXPECT_TRUE(seen) << read_file(dir_ / "runner.out");
  EXPECT_TRUE(testing::process_alive(child.pid)) << "the lines came only with the end of the run";
  ::kill(child.pid, SIGINT);
  ASSERT_TRUE(testing::wait_for(child, 20s));
  expect_no_survivors();
}

TEST_F(OperationE2E, ResumeAcceptsTheRunsOwnOptionsAndNamesTheOnesThatDiffer) {
  const std::vector<std::string> own{"--no-shim", "-j", "1", "test_a_quick.py", "test_b_slow.py"};
  auto child = testing::spawn(runner_argv("slow", own), env(), dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually(
      [&] {
        return read_file(out() / "run.log").find("Finished test: test_a_quick.py") !=
                   std::string::npos &&
               testing::pids_in(pids()).size() == 1;
      },
      60s));
  ::kill(child.pid, SIGKILL);
  testing::wait_for(child, 10s);
  expect_no_survivors();

  // What differs from the run is refused by name, before anything is written.
  auto other = runner_argv("slow", {"--no-shim", "--resume", "latest", "test_c_slow.py"});
  auto r = testing::run(other, env());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("drop targets (the run's: test_a_quick.py test_b_slow.py)"),
            std::string::npos)
      << r.output;
  r = testing::run({RUNNER_PATH, (kSuites / "slow").string(), "--db", db().string(), "--out",
                    (dir_ / "elsewhere").string(), "--python", SUITE_PYTHON, "--resume", "latest"},
                   env());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("drop --out (the run's: " + out().string() + ")"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere"));

  // `cmd || cmd --resume latest`: the first command's own options are accepted.
  auto again = runner_argv("slow", own);
  for (const char* extra : {"--resume", "latest", "--timeout", "1", "--kill-grace", "1"}) {
    again.emplace_back(extra);
  }
  r = testing::run(again, env());
  EXPECT_EQ(r.exit_code, 1) << r.output;  // test_b_slow.py now times out
  EXPECT_NE(r.output.find("resumed"), std::string::npos) << r.output;
  EXPECT_EQ(Store(db()).runs(10).size(), 1U);
  auto files = files_of_last_run();
  EXPECT_EQ(files.at("test_a_quick.py").status, FileStatus::kPassed);
  EXPECT_EQ(files.at("test_b_slow.py").status, FileStatus::kTimeout);
  expect_no_survivors();
}

TEST_F(OperationE2E, ACopiedDatabaseNeverDeletesOrRewritesTheOriginalsFolders) {
  const fs::path suite = cuda_suite("copied");
  auto run_to = [&](const fs::path& folder) {
    return testing::run({RUNNER_PATH, suite.string(), "--db", db().string(), "--out",
                         folder.string(), "--python", TORCH_PYTHON},
                        env());
  };
  const fs::path first = dir_ / "run1", second = dir_ / "run2";
  ASSERT_EQ(run_to(first).exit_code, 0) << read_file(first / "logs/test_cuda.py.log");
  ASSERT_EQ(run_to(second).exit_code, 0);
  // The shim's record is beside the log; the lock its processes took is gone with them.
  ASSERT_TRUE(fs::exists(first / "logs/test_cuda.py.log.redirections.json"));
  EXPECT_FALSE(fs::exists(first / "logs/test_cuda.py.log.redirections.json.lock"));
  // One an older runner left: prune takes it too.
  testing::write_file(first / "logs/test_cuda.py.log.redirections.json.lock", "");

  const fs::path copy = dir_ / "copy.db";
  fs::copy_file(db(), copy);
  auto r = testing::run({RUNNER_PATH, "prune", "--keep", "1", "--db", copy.string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("is database " + db().string() + "'s: it stays"), std::string::npos)
      << r.output;
  EXPECT_TRUE(fs::exists(first / "run.log"));
  EXPECT_TRUE(fs::exists(first / "logs/test_cuda.py.log"));

  const std::string report_md = read_file(second / "report.md");
  r = testing::run({RUNNER_PATH, "report", "2", "--db", copy.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("belongs to database " + db().string()), std::string::npos) << r.output;
  EXPECT_EQ(read_file(second / "report.md"), report_md);

  // The original's own prune empties its folder: no lock file, no marker left behind.
  r = testing::run({RUNNER_PATH, "prune", "--keep", "1", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(first))
      << "left in the pruned folder: "
      << (fs::exists(first) ? fs::begin(fs::recursive_directory_iterator(first))->path().string()
                            : "");
  EXPECT_TRUE(fs::exists(second / "report.md"));
}

TEST_F(OperationE2E, NamesWithControlCharactersReachNoTerminalOrLogRaw) {
  const fs::path suite = dir_ / "hostile-names";
  write_file(suite / "suite.json",
             R"({"name": "e2e-names", "project_root": ".", "tests_dir": "tests",)"
             R"( "framework": "pytest"})");
  const std::string body = "def test_one():\n    assert False\n";
  write_file(suite / "tests/test_\x1b[2Jclear.py", body);
  write_file(suite / "tests/test_new\nline.py", body);
  auto r = testing::run({RUNNER_PATH, suite.string(), "--db", db().string(), "--out",
                         out().string(), "--python", SUITE_PYTHON, "--no-shim", "-j", "1"},
                        env());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("test_\\x1b[2Jclear.py"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("test_new\\nline.py"), std::string::npos) << r.output;
  // run.log stays one event per line: every line starts with its timestamp.
  const std::string log = read_file(out() / "run.log");
  EXPECT_EQ(log.find('\x1b'), std::string::npos);
  std::size_t start = 0;
  while (start < log.size()) {
    EXPECT_EQ(log.compare(start, 2, "20"), 0) << log.substr(start, 60);
    start = log.find('\n', start) + 1;
    if (start == 0) break;
  }
  r = testing::run({RUNNER_PATH, "show", "latest", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("test_new\\nline.py"), std::string::npos) << r.output;
}

TEST_F(OperationE2E, AReadOnlyDatabaseCanBeListedAndADamagedOneIsNamedWithoutSql) {
  auto r = run_runner("slow", {"--no-shim", "test_a_quick.py"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> as_reader = as_unprivileged_user();
  ASSERT_EQ(::chmod(db().c_str(), 0444), 0);
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0555), 0);
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"runs"}, {"show", "latest"}, {"gaps", "list"}}) {
    std::vector<std::string> argv = as_reader;
    argv.emplace_back(RUNNER_PATH);
    argv.insert(argv.end(), command.begin(), command.end());
    argv.insert(argv.end(), {"--db", db().string()});
    r = testing::run(argv);
    EXPECT_EQ(r.exit_code, 0) << command[0] << ": " << r.output;
    if (command[0] == "runs") {
      EXPECT_NE(r.output.find("e2e-slow"), std::string::npos) << r.output;
    }
  }
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0700), 0);
  ASSERT_EQ(::chmod(db().c_str(), 0644), 0);

  const fs::path garbage = dir_ / "garbage.db";
  write_file(garbage, std::string(8192, 'x'));
  r = testing::run({RUNNER_PATH, "runs", "--db", garbage.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("no SQLite database"), std::string::npos) << r.output;
  for (const char* sql : {"SELECT", "PRAGMA", "INSERT"}) {
    EXPECT_EQ(r.output.find(sql), std::string::npos) << r.output;
  }
}

TEST_F(OperationE2E, CommandsFindTheProjectsDatabaseFromTheCheckout) {
  // ./run.sh keeps results in <checkout>/.devshim; commands started anywhere in the checkout
  // read that database without --db.
  const fs::path project = dir_ / "checkout";
  fs::create_directories(project / "sub");
  auto r = testing::run(
      {RUNNER_PATH, (kSuites / "slow").string(), "--db", (project / ".devshim/results.db").string(),
       "--python", SUITE_PYTHON, "--no-shim", "test_a_quick.py"},
      {{"DEVSHIM_OUT", (project / ".devshim/runs").string()}});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::map<std::string, std::string> plain_env{{"DEVSHIM_DB", ""},
                                                     {"DEVSHIM_OUT", ""},
                                                     {"XDG_DATA_HOME", ""},
                                                     {"HOME", (dir_ / "home").string()}};
  r = run_in(project / "sub", {RUNNER_PATH, "runs"}, plain_env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("e2e-slow"), std::string::npos) << r.output;
  // A run from there records into it, and writes its folder beside it.
  r = run_in(project / "sub",
             {RUNNER_PATH, (kSuites / "slow").string(), "--python", SUITE_PYTHON, "--no-shim",
              "test_a_quick.py"},
             plain_env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Store(project / ".devshim/results.db").runs(10).size(), 2U);
  EXPECT_NE(r.output.find((project / ".devshim/runs/e2e-slow").string()), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "home/.local/share/devshim"));
}

TEST_F(OperationE2E, AnInterpreterThatIsNoPythonIsNamed) {
  // Refused before anything runs (InterpreterE2E has the other cases).
  auto r = testing::run({RUNNER_PATH, (kSuites / "slow").string(), "--db", db().string(), "--out",
                         out().string(), "--python", "/bin/false", "--no-shim", "test_a_quick.py"},
                        env());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/bin/false is no Python interpreter (--python): asked for its version "
                          "(/bin/false -I -S -c ...), it exited with 1 and printed nothing"),
            std::string::npos)
      << r.output;
  // One file runs one at a time, whatever -j (the number of cores here) says.
  r = run_runner("slow", {"--no-shim", "test_a_quick.py"});
  EXPECT_NE(r.output.find("1 file of e2e-slow, 1 at once"), std::string::npos) << r.output;
  // The gap scan's interpreter is the user's to change: bad input, exit 2.
  r = testing::run({RUNNER_PATH, "gaps", "scan", "--python", "/bin/false", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("give --python an interpreter that has torch"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace devshim
