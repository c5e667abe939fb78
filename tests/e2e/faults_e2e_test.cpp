// Faults of issue 9 against the real runner: a runner killed with SIGKILL and resumed, hostile
// test files (daemons, closed stdout, a 1 GB writer, invalid UTF-8 and NULs, odd names), a locked
// database, two runners on one database, a read-only output folder (docs/reliability.md).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "base/error.h"
#include "runner/results/sqlite.h"
#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;

constexpr int kResumeFiles = 8;

// One integer from a query on the database, read as another process would; -1: no row, or no
// such table yet.
std::int64_t query_int(const fs::path& db, const std::string& sql) {
  try {
    sql::Database d(db);
    sql::Statement s(d, sql);
    return s.step() ? s.int64(0) : -1;
  } catch (const Error&) {
    return -1;
  }
}

std::string query_text(const fs::path& db, const std::string& sql) {
  sql::Database d(db);
  sql::Statement s(d, sql);
  return s.step() ? s.text(0) : "";
}

// How many times each test file of the resume suite ran (a line per run in <file>.runs).
std::map<std::string, int> executions(const fs::path& marker_dir) {
  std::map<std::string, int> out;
  for (int i = 1; i <= kResumeFiles; ++i) {
    const std::string name = fmt::format("test_r{}.py", i);
    const std::string text = testing::read_file(marker_dir / (name + ".runs"));
    out[name] = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }
  return out;
}

class FaultsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(markers());
    fs::create_directories(pids());
  }
  fs::path db() const { return dir_ / "results.db"; }
  fs::path out() const { return dir_ / "out"; }
  fs::path markers() const { return dir_ / "markers"; }
  fs::path pids() const { return dir_ / "pids"; }
  fs::path suite() const { return dir_ / "suite"; }

  // suite()/suite.json: the suite `name` of the tests in suite()/tests, run by python3 with
  // `framework`, 60 s a file.
  void write_suite_json(const std::string& name, const std::string& framework) {
    write_file(suite() / "suite.json",
               fmt::format(R"({{"name": "{}", "project_root": ".", "tests_dir": "tests",
                   "framework": "{}", "python": "python3", "timeout_s": 60}})",
                           name, framework));
  }

  // kResumeFiles files of three tests; each run of a file adds a line to its marker, and
  // test_one sleeps E2E_SLEEP seconds.
  void write_resume_suite() {
    write_suite_json("e2e-resume", "unittest");
    for (int i = 1; i <= kResumeFiles; ++i) {
      write_file(suite() / fmt::format("tests/test_r{}.py", i), R"(import os
import time
import unittest

with open(os.path.join(os.environ["E2E_MARKER_DIR"], os.path.basename(__file__) + ".runs"),
          "a") as marker:
    marker.write("ran\n")


class Resumable(unittest.TestCase):
    def test_one(self):
        time.sleep(float(os.environ.get("E2E_SLEEP", "0")))

    def test_two(self):
        pass

    def test_three(self):
        pass
)");
    }
  }

  std::vector<std::string> runner_argv(const std::vector<std::string>& extra) const {
    std::vector<std::string> argv{
        RUNNER_PATH, suite().string(), "--db", db().string(), "--python", SUITE_PYTHON, "-j",
        "2",         "--timeout",      "60"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  std::map<std::string, std::string> env(const std::string& sleep_s) const {
    return {{"E2E_MARKER_DIR", markers().string()},
            {"E2E_PID_DIR", pids().string()},
            {"E2E_SLEEP", sleep_s},
            {"NO_COLOR", "1"}};
  }
  std::int64_t finished_files() const {
    return query_int(db(), "SELECT count(*) FROM files WHERE status IS NOT NULL");
  }
  // The checks every resumed run must pass: one row per file and per test, all passed, the
  // database intact.
  void expect_complete_and_intact() {
    EXPECT_EQ(query_text(db(), "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(query_int(db(), "SELECT count(*) FROM runs"), 1);
    EXPECT_EQ(query_text(db(), "SELECT status FROM runs"), "passed");
    EXPECT_EQ(query_int(db(), "SELECT count(*) FROM files WHERE status = 'passed'"), kResumeFiles);
    EXPECT_EQ(query_int(db(), "SELECT count(*) FROM cases"), 3 * kResumeFiles);
    EXPECT_EQ(query_int(db(),
                        "SELECT count(*) FROM (SELECT DISTINCT file_id, classname, name "
                        "FROM cases WHERE status = 'passed')"),
              3 * kResumeFiles);
    EXPECT_EQ(query_int(db(), "PRAGMA foreign_key_check"), -1) << "no dangling references";
  }

  TempDir dir_;
};

TEST_F(FaultsE2E, ARunKilledWithSigkillResumesRunningOnlyItsUnfinishedFiles) {
  write_resume_suite();
  auto runner = testing::spawn(runner_argv({"--out", out().string(), "--no-shim"}), env("1.5"),
                               dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually([&] { return fs::exists(db()) && finished_files() >= 3; }, 90s))
      << testing::read_file(dir_ / "runner.out");
  ::kill(runner.pid, SIGKILL);
  ASSERT_TRUE(testing::wait_for(runner, 10s));

  // What the database held when the runner died: finished files keep their results.
  std::set<std::string> done_before;
  {
    sql::Database d(db());
    sql::Statement s(d, "SELECT path FROM files WHERE status IS NOT NULL");
    while (s.step()) done_before.insert(s.text(0));
  }
  ASSERT_GE(done_before.size(), 3U);
  ASSERT_LT(done_before.size(), static_cast<std::size_t>(kResumeFiles));
  EXPECT_EQ(query_text(db(), "PRAGMA integrity_check"), "ok");

  auto r = testing::run(runner_argv({"--resume", "latest"}), env("0"), 120s);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(
                fmt::format("runner: run 1 resumed: {} files", kResumeFiles - done_before.size())),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(fmt::format("runner: run 1 passed: {} files", kResumeFiles)),
            std::string::npos)
      << r.output;
  expect_complete_and_intact();

  // Finished files ran once; the others at most twice (those running at the kill) and at least
  // once.
  int reruns = 0;
  for (const auto& [file, n] : executions(markers())) {
    if (done_before.count(file) > 0) {
      EXPECT_EQ(n, 1) << file << " had a result, yet ran again";
    } else {
      EXPECT_GE(n, 1) << file;
      EXPECT_LE(n, 2) << file;
      reruns += n - 1;
    }
  }
  EXPECT_LE(reruns, 2) << "only the files running at the kill (-j 2) start twice";
  // The run log tells both halves; the reports cover the whole run.
  const std::string run_log = testing::read_file(out() / "run.log");
  EXPECT_NE(run_log.find("Run 1 of suite e2e-resume"), std::string::npos) << run_log;
  EXPECT_NE(run_log.find("Run 1 resumed"), std::string::npos) << run_log;
  EXPECT_NE(testing::read_file(out() / "report.md").find("8 passed"), std::string::npos);

  // A finished run has nothing to resume.
  auto again = testing::run(runner_argv({"--resume", "1"}), env("0"));
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("run 1 has finished (passed): nothing to resume"), std::string::npos)
      << again.output;
}

// SIGKILL at random moments (start-up, planning, while recording, between files, while finishing),
// with --resume after each, then one last --resume left to complete the run: nothing recorded is
// lost, run again or duplicated.
TEST_F(FaultsE2E, RepeatedSigkillsAtRandomMomentsLoseNothing) {
  constexpr int kKills = 6;
  write_resume_suite();
  // DEVSHIM_FAULT_SEED replays the seed a failure printed.
  const char* fixed_seed = std::getenv("DEVSHIM_FAULT_SEED");
  const unsigned seed = fixed_seed != nullptr ? static_cast<unsigned>(std::stoul(fixed_seed))
                                              : std::random_device{}();
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> delay_ms(50, 2500);
  std::map<std::string, int> runs_when_done;  // file -> its executions when a result was seen
  int killed = 0;
  for (int round = 0; round <= kKills; ++round) {
    const bool first = query_int(db(), "SELECT count(*) FROM runs") < 1;
    if (!first && query_text(db(), "SELECT status FROM runs") == "passed") break;
    auto runner = testing::spawn(
        runner_argv(first ? std::vector<std::string>{"--out", out().string(), "--no-shim"}
                          : std::vector<std::string>{"--resume", "latest"}),
        env("0.4"), dir_ / "runner.out");
    // The last round runs to the end; the others are killed (SIGKILL to the runner's group).
    const auto limit = round < kKills ? std::chrono::milliseconds(delay_ms(random)) : 120'000ms;
    auto status = testing::wait_for(runner, limit);
    if (!status) {
      ++killed;
    } else if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
      ADD_FAILURE() << "seed " << seed << ": " << testing::read_file(dir_ / "runner.out");
    }
    if (!fs::exists(db())) continue;
    ASSERT_EQ(query_text(db(), "PRAGMA integrity_check"), "ok") << "seed " << seed;
    // A runner killed in its first milliseconds may leave the file without the schema, which
    // is made in one transaction: the next round starts the run afresh.
    if (query_int(db(), "SELECT count(*) FROM sqlite_master WHERE name = 'files'") < 1) continue;
    const auto seen = executions(markers());
    sql::Database d(db());
    sql::Statement done(d, "SELECT path FROM files WHERE status IS NOT NULL");
    while (done.step()) runs_when_done.emplace(done.text(0), seen.at(done.text(0)));
  }
  ASSERT_EQ(query_text(db(), "SELECT status FROM runs"), "passed") << "seed " << seed;
  expect_complete_and_intact();
  for (const auto& [file, n] : executions(markers())) {
    EXPECT_EQ(n, runs_when_done.at(file))
        << file << " ran again after its result was recorded (seed " << seed << ")";
  }
  std::printf("seed %u: %d SIGKILLs before the run completed\n", seed, killed);
}

TEST_F(FaultsE2E, AnInterruptedRunResumesItsInterruptedFilesAndALiveRunIsNotResumed) {
  write_resume_suite();
  auto runner = testing::spawn(runner_argv({"--out", out().string(), "--no-shim"}), env("600"),
                               dir_ / "runner.out");
  // Two files sleep in test_one: the run cannot finish by itself.
  ASSERT_TRUE(testing::eventually(
      [&] {
        int started = 0;
        for (const auto& [file, n] : executions(markers())) started += n;
        return started == 2 && fs::exists(db());
      },
      60s));
  ASSERT_TRUE(testing::eventually(
      [&] { return query_text(db(), "SELECT status FROM runs") == "running"; }, 30s));

  auto live = testing::run(runner_argv({"--resume", "latest"}), env("0"));
  EXPECT_EQ(live.exit_code, 2) << live.output;
  EXPECT_NE(live.output.find(fmt::format("run 1 is still running (runner pid {}", runner.pid)),
            std::string::npos)
      << live.output;

  ::kill(runner.pid, SIGINT);
  auto status = testing::wait_for(runner, 30s);
  ASSERT_TRUE(status && WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 130);
  EXPECT_EQ(query_text(db(), "SELECT status FROM runs"), "interrupted");
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM files WHERE status = 'interrupted'"), 2);

  // Options that differ from the run's are refused by name (equal ones: OperationE2E).
  for (const auto& option : std::vector<std::vector<std::string>>{
           {"--resume", "1", "test_r1.py"},
           {"--resume", "1", "--out", (dir_ / "other").string()}}) {
    auto refused = testing::run(runner_argv(option), env("0"));
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_NE(refused.output.find("--resume continues run 1 as it was started: drop "),
              std::string::npos)
        << refused.output;
  }

  auto r = testing::run(runner_argv({"--resume", "1"}), env("0"), 120s);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_complete_and_intact();
  for (const auto& [file, n] : executions(markers())) {
    EXPECT_LE(n, 2) << file;
    EXPECT_GE(n, 1) << file;
  }
}

TEST_F(FaultsE2E, AResumedRunRerunsTheFailuresOfItsInterruptedSession) {
  // test_a fails the first time only and finishes first; test_b sleeps until Ctrl-C. The
  // interrupted session never reached its reruns: the resumed one must rerun test_a.
  write_suite_json("e2e-resume-reruns", "unittest");
  write_file(suite() / "tests/test_a.py", R"(import os
import unittest

FIRST = os.path.join(os.environ["E2E_MARKER_DIR"], "test_a.failed-once")


class Flaky(unittest.TestCase):
    def test_flaky(self):
        if not os.path.exists(FIRST):
            open(FIRST, "w").close()
            self.fail("fails the first time only")

    def test_fine(self):
        pass
)");
  write_file(suite() / "tests/test_b.py", R"(import os
import time
import unittest


class Slow(unittest.TestCase):
    def test_slow(self):
        time.sleep(float(os.environ["E2E_SLEEP"]))
)");
  auto argv = runner_argv({"--out", out().string(), "--no-shim", "--rerun-failures", "1"});
  *(std::find(argv.begin(), argv.end(), "-j") + 1) = "1";  // test_a, then test_b
  auto runner = testing::spawn(argv, env("600"), dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually(
      [&] { return query_int(db(), "SELECT count(*) FROM files WHERE status = 'failed'") == 1; },
      60s))
      << testing::read_file(dir_ / "runner.out");
  ::kill(runner.pid, SIGINT);
  auto status = testing::wait_for(runner, 30s);
  ASSERT_TRUE(status && WIFEXITED(*status));
  ASSERT_EQ(WEXITSTATUS(*status), 130) << testing::read_file(dir_ / "runner.out");
  ASSERT_EQ(query_int(db(), "SELECT count(*) FROM attempts"), 0) << "reruns after Ctrl-C";

  auto resume = runner_argv({"--resume", "1", "--rerun-failures", "1"});
  auto r = testing::run(resume, env("0"), 120s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rerun 1 of 1: 1 failing file"), std::string::npos) << r.output;
  EXPECT_EQ(query_text(db(), "SELECT status FROM runs"), "passed");
  EXPECT_EQ(query_text(db(), "SELECT status FROM files WHERE path = 'test_a.py'"), "passed");
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM attempts WHERE name = 'test_flaky'"), 2);
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM cases WHERE flaky = 1"), 1);
}

TEST_F(FaultsE2E, ReranFilesOfAnInterruptedRerunAreNotRerunAgainOnResume) {
  // Both files always fail; test_b sleeps from its second run on, so Ctrl-C lands in test_b's
  // rerun, after test_a's. The resumed run reruns test_b alone: test_a's rerun is recorded.
  write_suite_json("e2e-resume-reruns", "unittest");
  for (const char* name : {"test_a", "test_b"}) {
    write_file(suite() / fmt::format("tests/{}.py", name), R"(import os
import time
import unittest

RUNS = os.path.join(os.environ["E2E_MARKER_DIR"], os.path.basename(__file__) + ".runs")
with open(RUNS, "a+") as marker:
    marker.seek(0)
    before = marker.read().count("\n")
    marker.write("ran\n")


class Failing(unittest.TestCase):
    def test_fails(self):
        if before > 0 and __file__.endswith("test_b.py"):
            time.sleep(float(os.environ["E2E_SLEEP"]))
        self.fail("always")
)");
  }
  auto argv = runner_argv({"--out", out().string(), "--no-shim", "--rerun-failures", "1"});
  *(std::find(argv.begin(), argv.end(), "-j") + 1) = "1";
  auto runner = testing::spawn(argv, env("600"), dir_ / "runner.out");
  const auto runs_of = [&](const char* file) {
    const std::string text = testing::read_file(markers() / (std::string(file) + ".runs"));
    return std::count(text.begin(), text.end(), '\n');
  };
  ASSERT_TRUE(testing::eventually([&] { return runs_of("test_b.py") == 2; }, 60s))
      << testing::read_file(dir_ / "runner.out");
  ::kill(runner.pid, SIGINT);
  auto status = testing::wait_for(runner, 30s);
  ASSERT_TRUE(status && WIFEXITED(*status));
  ASSERT_EQ(WEXITSTATUS(*status), 130) << testing::read_file(dir_ / "runner.out");
  const std::string attempts_of_a =
      "SELECT count(*) FROM attempts JOIN files ON files.id = attempts.file_id "
      "WHERE files.path = 'test_a.py'";
  ASSERT_EQ(query_int(db(), attempts_of_a), 2) << "test_a's rerun is recorded";

  auto r = testing::run(runner_argv({"--resume", "1", "--rerun-failures", "1"}), env("0"), 120s);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("rerun 1 of 1: 1 failing file"), std::string::npos) << r.output;
  EXPECT_EQ(runs_of("test_a.py"), 2) << "test_a was rerun a second time";
  EXPECT_EQ(runs_of("test_b.py"), 3);
  EXPECT_EQ(query_int(db(), attempts_of_a), 2);
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM attempts"), 4);
  EXPECT_EQ(query_text(db(), "SELECT status FROM runs"), "failed");
}

TEST_F(FaultsE2E, ACrashedFileThatPassesOnItsRerunKeepsTheRerunsResults) {
  // The crash ends the file before test_3 runs; the rerun runs all three and passes.
  write_suite_json("e2e-crash-rerun", "unittest");
  write_file(suite() / "tests/test_crash.py", R"(import os
import unittest

MARK = os.path.join(os.environ["E2E_MARKER_DIR"], "crashed-once")


class Crash(unittest.TestCase):
    def test_1_before(self):
        pass

    def test_2_crashes_once(self):
        if not os.path.exists(MARK):
            open(MARK, "w").close()
            os.abort()

    def test_3_after(self):
        pass
)");
  auto r = testing::run(
      runner_argv({"--out", out().string(), "--no-shim", "--rerun-failures", "1"}), env("0"), 120s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(query_text(db(), "SELECT status FROM files"), "passed");
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM cases"), 3);
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM cases WHERE status = 'passed'"), 3);
  EXPECT_EQ(query_text(db(), "SELECT name FROM cases WHERE flaky = 1"), "test_2_crashes_once");
  EXPECT_NE(query_text(db(), "SELECT exception FROM cases WHERE flaky = 1"), "")
      << "the first failure is no longer readable";
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM cases WHERE coalesce(culprit, '') != ''"), 0);
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM attempts"), 2);
  EXPECT_NE(query_text(db(), "SELECT note FROM files").find("flaky"), std::string::npos);
}

// A test that crashes its process (the kernel's OOM killer, a segfault) no longer loses the rest of
// its file: the file runs again without the tests it reported, until it ends or makes no progress.
TEST_F(FaultsE2E, APytestFileGoesOnAfterEachCrashWithoutTheTestsItReported) {
  write_suite_json("e2e-crash-continue", "pytest");
  write_file(suite() / "tests/test_crash.py", R"(import os
import signal


def test_1_before():
    pass


def test_2_killed():
    os.kill(os.getpid(), signal.SIGKILL)


def test_3_after():
    pass


def test_4_aborts():
    os.abort()


def test_5_last():
    assert False, "fails on its own"
)");
  auto r = testing::run(runner_argv({"--out", out().string(), "--no-shim"}), env("0"), 120s);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("continuing 1 file cut short (a crash, a test that ended the session) "
                          "without the tests already reported (1 of"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(query_text(db(), "SELECT status FROM files"), "crashed");
  EXPECT_EQ(query_text(db(),
                       "SELECT group_concat(name || '=' || status, ' ') FROM "
                       "(SELECT name, status FROM cases ORDER BY name)"),
            "test_1_before=passed test_2_killed=error test_3_after=passed test_4_aborts=error "
            "test_5_last=failed");
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM cases WHERE coalesce(culprit, '') != ''"), 2);
  const std::string note = query_text(db(), "SELECT note FROM files");
  EXPECT_NE(note.find("continued: 3 more tests ran in 2 more processes "
                      "(continued/1/test_crash.py.log, continued/2/test_crash.py.log)"),
            std::string::npos)
      << note;

  // Off: the tests after the first crash are not run.
  fs::remove(db());
  fs::remove_all(out());
  r = testing::run(
      runner_argv({"--out", out().string(), "--no-shim", "--continue-after-crash", "0"}), env("0"),
      120s);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(query_text(db(),
                       "SELECT group_concat(name, ' ') FROM "
                       "(SELECT name FROM cases ORDER BY name)"),
            "test_1_before test_2_killed");
  EXPECT_EQ(r.output.find("continuing"), std::string::npos) << r.output;
}

// A test that ends pytest's session itself (it raises KeyboardInterrupt, it calls pytest.exit()) is
// an error with that exception, and the rest of its file runs as after a crash.
TEST_F(FaultsE2E, APytestFileGoesOnAfterATestThatEndsTheSession) {
  write_suite_json("e2e-session-ended", "pytest");
  write_file(suite() / "tests/test_ends.py", R"(import pytest


def test_1_before():
    pass


def test_2_interrupts():
    raise KeyboardInterrupt


def test_3_after():
    pass


def test_4_exits():
    pytest.exit("enough of this")


def test_5_last():
    pass
)");
  auto r = testing::run(runner_argv({"--out", out().string(), "--no-shim"}), env("0"), 120s);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("continuing 1 file cut short"), std::string::npos) << r.output;
  EXPECT_EQ(query_text(db(), "SELECT status FROM files"), "error");
  EXPECT_EQ(
      query_text(db(),
                 "SELECT group_concat(name || '=' || status || ':' || coalesce(exception, ''), "
                 "' ') FROM (SELECT name, status, exception FROM cases ORDER BY name)"),
      "test_1_before=passed: test_2_interrupts=error:KeyboardInterrupt test_3_after=passed: "
      "test_4_exits=error:_pytest.outcomes.Exit test_5_last=passed:");
  EXPECT_EQ(query_int(db(), "SELECT count(*) FROM cases WHERE coalesce(culprit, '') != ''"), 0);
  const std::string note = query_text(db(), "SELECT note FROM files");
  EXPECT_NE(note.find("KeyboardInterrupt in test_2_interrupts ended the test session"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("continued: 3 more tests ran in 2 more processes"), std::string::npos)
      << note;
}

// Holds the database locked (an EXCLUSIVE transaction) for hold_s seconds; `ready` appears once
// the lock is taken.
testing::Child lock_database(const fs::path& db, const fs::path& ready, const std::string& hold_s,
                             const fs::path& out) {
  auto child = testing::spawn({"python3", "-c",
                               "import sqlite3, sys, time\n"
                               "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                               "con.execute('PRAGMA journal_mode=WAL')\n"
                               "con.execute('BEGIN EXCLUSIVE')\n"
                               "open(sys.argv[2], 'w').close()\n"
                               "time.sleep(float(sys.argv[3]))\n"
                               "con.execute('COMMIT')\n",
                               db.string(), ready.string(), hold_s},
                              {}, out);
  EXPECT_TRUE(testing::eventually([&] { return fs::exists(ready); }, 20s))
      << testing::read_file(out);
  return child;
}

TEST_F(FaultsE2E, ALockedDatabaseIsWaitedForThenRefusedClearlyBeforeAnyTestRuns) {
  write_resume_suite();
  auto locker = lock_database(db(), dir_ / "locked", "600", dir_ / "locker.out");
  auto env_with_timeout = env("0");
  env_with_timeout["DEVSHIM_DB_TIMEOUT"] = "2";
  const auto start = std::chrono::steady_clock::now();
  auto r = testing::run(runner_argv({"--out", out().string(), "--no-shim"}), env_with_timeout);
  const auto waited = std::chrono::steady_clock::now() - start;
  ::kill(locker.pid, SIGKILL);
  testing::wait_for(locker, 10s);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("runner: error: " + db().string() +
                          ": the database is locked by another process (waited 2 s"),
            std::string::npos)
      << r.output;
  EXPECT_GE(waited, 2s);
  for (const auto& [file, n] : executions(markers())) EXPECT_EQ(n, 0) << file << " ran";
}

TEST_F(FaultsE2E, ALockReleasedWithinTheTimeoutOnlyDelaysTheRun) {
  write_resume_suite();
  auto locker = lock_database(db(), dir_ / "locked", "1.5", dir_ / "locker.out");
  auto r = testing::run(runner_argv({"--out", out().string(), "--no-shim"}), env("0"), 120s);
  testing::wait_for(locker, 10s);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_complete_and_intact();
}

TEST_F(FaultsE2E, AReadOnlyOutputFolderIsRefusedBeforeAnyTestRuns) {
  write_resume_suite();
  std::vector<fs::path> read_only{"/proc/devshim-out"};  // read-only for root too
  if (::geteuid() != 0) {
    fs::create_directories(dir_ / "ro");
    fs::permissions(dir_ / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    read_only.push_back(dir_ / "ro/out");
  }
  for (const fs::path& folder : read_only) {
    auto r = testing::run(runner_argv({"--out", folder.string(), "--no-shim"}), env("0"));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("runner: error: output folder " + folder.string() + " is not writable"),
              std::string::npos)
        << r.output;
  }
  EXPECT_FALSE(fs::exists(db()));
  for (const auto& [file, n] : executions(markers())) EXPECT_EQ(n, 0) << file << " ran";
}

TEST_F(FaultsE2E, ResultsWaitInMemoryWhileTheDatabaseIsLockedMidRun) {
  write_resume_suite();
  auto env_with_timeout = env("0.7");
  env_with_timeout["DEVSHIM_DB_TIMEOUT"] = "0.5";
  auto runner = testing::spawn(runner_argv({"--out", out().string(), "--no-shim"}),
                               env_with_timeout, dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually([&] { return finished_files() >= 1; }, 60s));
  auto locker = lock_database(db(), dir_ / "locked", "3", dir_ / "locker.out");
  auto status = testing::wait_for(runner, 120s);
  testing::wait_for(locker, 10s);
  const std::string output = testing::read_file(dir_ / "runner.out");
  ASSERT_TRUE(status && WIFEXITED(*status)) << output;
  EXPECT_EQ(WEXITSTATUS(*status), 0) << output;
  EXPECT_NE(output.find("results wait in memory"), std::string::npos) << output;
  expect_complete_and_intact();
  for (const auto& [file, n] : executions(markers())) EXPECT_EQ(n, 1) << file;
}

TEST_F(FaultsE2E, TwoRunnersOnOneDatabaseAtOnceBothCompleteUnmixed) {
  write_resume_suite();
  // Both start on a database that does not exist yet: they also race to create its schema.
  std::vector<testing::Child> runners;
  for (const char* name : {"a", "b"}) {
    runners.push_back(testing::spawn(runner_argv({"--out", (dir_ / name).string(), "--no-shim"}),
                                     env("0.3"), dir_ / (std::string(name) + ".out")));
  }
  for (std::size_t i = 0; i < runners.size(); ++i) {
    auto status = testing::wait_for(runners[i], 120s);
    ASSERT_TRUE(status && WIFEXITED(*status)) << i;
    EXPECT_EQ(WEXITSTATUS(*status), 0) << testing::read_file(dir_ / (i == 0 ? "a.out" : "b.out"));
  }
  EXPECT_EQ(query_text(db(), "PRAGMA integrity_check"), "ok");
  Store store(db());
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2U);
  std::set<std::string> out_dirs;
  for (const RunRecord& run : runs) {
    EXPECT_EQ(run.status, "passed");
    out_dirs.insert(run.out_dir);
    const auto files = store.files(run.id);
    EXPECT_EQ(files.size(), static_cast<std::size_t>(kResumeFiles));
    for (const FileRecord& f : files) {
      EXPECT_TRUE(fs::exists(fs::path(run.out_dir) / f.log_path)) << run.id << " " << f.path;
    }
    EXPECT_EQ(store.cases(run.id).size(), static_cast<std::size_t>(3 * kResumeFiles));
  }
  EXPECT_EQ(out_dirs, (std::set<std::string>{(dir_ / "a").string(), (dir_ / "b").string()}));
  for (const auto& [file, n] : executions(markers())) EXPECT_EQ(n, 2) << file;
}

// Valid UTF-8 (nlohmann::json refuses anything else when dumping).
bool valid_utf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

TEST_F(FaultsE2E, HostileTestFilesNeverTakeTheRunDown) {
  const fs::path hostile = fs::path(E2E_SUITES_DIR) / "hostile";
  const std::string odd = "test_odd name 'single' \"double\" \u00fcn\u00efc\u00f8d\u00e9 \u2713.py";
  auto r = testing::run({RUNNER_PATH, hostile.string(), "--db", db().string(), "--out",
                         out().string(), "--python", SUITE_PYTHON, "--no-shim", "-j", "2"},
                        env("0"), 240s);
  ASSERT_EQ(r.exit_code, 1) << r.output;
  Store store(db());
  const RunRecord run = store.runs(1).at(0);
  std::map<std::string, FileRecord> files;
  for (auto& f : store.files(run.id)) files[f.path] = f;
  ASSERT_EQ(files.size(), 5U) << r.output;

  // A daemon (fork, setsid, fork) left the test's group: it is found and killed all the same.
  EXPECT_EQ(files.at("test_daemon.py").status, FileStatus::kPassed);
  const auto daemons = testing::pids_in(pids());
  ASSERT_EQ(daemons.size(), 1U);
  EXPECT_TRUE(testing::eventually([&] { return !testing::process_alive(daemons[0]); }, 3s))
      << "the daemon " << daemons[0] << " outlived its test file";

  // No output at all: an error, and the note says why nothing could be parsed.
  const FileRecord& silent = files.at("test_closed_stdout.py");
  EXPECT_EQ(silent.status, FileStatus::kError);
  EXPECT_NE(silent.note.find("the log is empty"), std::string::npos) << silent.note;

  // 1 GB of output: kept in full (under the default --max-log-mb) and parsed.
  EXPECT_EQ(files.at("test_gigabyte.py").status, FileStatus::kPassed);
  EXPECT_GE(fs::file_size(out() / "logs/test_gigabyte.py.log"), 1'000'000'000U);

  // Invalid UTF-8 and NULs: stored and reported as valid UTF-8, no NUL anywhere.
  EXPECT_EQ(files.at("test_garbage.py").status, FileStatus::kFailed);
  for (const StoredCase& c : store.cases(run.id)) {
    for (const std::string* text : {&c.test.message, &c.test.traceback, &c.test.name}) {
      EXPECT_TRUE(valid_utf8(*text)) << c.test.name;
      EXPECT_EQ(text->find('\0'), std::string::npos) << c.test.name;
    }
  }
  for (const char* report : {"report.md", "report.json", "junit.xml", "report.html"}) {
    const std::string text = testing::read_file(out() / report);
    EXPECT_TRUE(valid_utf8(text)) << report;
    EXPECT_EQ(text.find('\0'), std::string::npos) << report;
  }
  EXPECT_TRUE(nlohmann::json::accept(testing::read_file(out() / "report.json")));

  // Spaces, quotes and non-ASCII letters in a file name: run, parsed, stored and linked as is.
  ASSERT_EQ(files.count(odd), 1U);
  EXPECT_EQ(files.at(odd).status, FileStatus::kFailed);
  EXPECT_TRUE(fs::exists(out() / "logs" / (odd + ".log")));
  std::size_t odd_cases = 0;
  for (const StoredCase& c : store.cases(run.id)) {
    if (c.file != odd) continue;
    ++odd_cases;
    if (c.test.status == CaseStatus::kFailed) {
      EXPECT_EQ(c.test.source.path, "tests/" + odd);
      EXPECT_EQ(c.test.source.line, 10);
    }
  }
  EXPECT_EQ(odd_cases, 2U);
  EXPECT_NE(testing::read_file(out() / "report.html")
                .find("href=\"logs/test_odd%20name%20%27single%27%20%22double%22%20"),
            std::string::npos);
}

}  // namespace
}  // namespace devshim
