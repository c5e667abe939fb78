#include "runner/results/store.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runner/base/error.h"
#include "runner/results/sqlite.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;

RunRecord sample_run() {
  RunRecord r;
  r.suite = "demo";
  r.suite_file = "/s/suite.json";
  r.framework = "pytest";
  r.targets = {"pipelines"};
  r.command_line = {"runner", "suites/demo", "pipelines"};
  r.started_at = "2026-11-21T00:00:00Z";
  r.project_root = "/proj";
  r.tests_dir = "tests";
  r.out_dir = "/out";
  r.jobs = 2;
  r.timeout_s = 60;
  return r;
}

TEST(Store, CreatesTheSchemaOnceAndReopens) {
  TempDir dir;
  { Store s(dir / "db/results.db"); }
  Store s(dir / "db/results.db");
  sql::Database db(dir / "db/results.db");
  sql::Statement v(db, "PRAGMA user_version");
  ASSERT_TRUE(v.step());
  EXPECT_EQ(v.int64(0), Store::schema_version());
  sql::Statement mode(db, "PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.text(0), "wal");
}

// Schema 10: a run's summary (what its report counted) is stored and read back; a database of
// schema 9 gains the column (and 11's), NULL (empty) for the runs it had.
TEST(Store, ARunsSummaryIsStoredAndOlderDatabasesGainTheColumn) {
  TempDir dir;
  const auto path = dir / "results.db";
  std::int64_t id = 0;
  {
    Store s(path);
    id = s.begin_run(sample_run(), {"test_a.py"});
    sql::Database db(path);
    db.exec("ALTER TABLE runs DROP COLUMN summary; ALTER TABLE runs DROP COLUMN policy");
    db.exec("PRAGMA user_version = 9");
  }
  Store s(path);
  EXPECT_EQ(s.run(id)->summary, "");
  EXPECT_EQ(s.run(id)->policy, "");
  s.set_summary(id, R"({"tests":3})");
  EXPECT_EQ(s.run(id)->summary, R"({"tests":3})");
  EXPECT_EQ(s.runs(1).at(0).summary, R"({"tests":3})");
}

// SQLite refuses one of two connections that turn a new database to WAL at once without calling
// the busy handler (about one race in fifteen); a Store must wait for the other instead.
TEST(Store, ProcessesCreatingOneDatabaseAtOnceAllOpenIt) {
  TempDir dir;
  constexpr int kRounds = 40;
  constexpr int kProcesses = 4;
  int refused = 0;
  for (int round = 0; round < kRounds; ++round) {
    const auto path = dir / ("race-" + std::to_string(round) + ".db");
    int gate[2];
    ASSERT_EQ(::pipe(gate), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
      const pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        ::close(gate[1]);
        char c = 0;
        (void)::read(gate[0], &c, 1);  // returns when the parent closes the gate: all start at once
        try {
          Store s(path);
          ::_exit(0);
        } catch (const std::exception&) {
          ::_exit(1);
        }
      }
      children.push_back(pid);
    }
    ::close(gate[0]);
    ::close(gate[1]);
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++refused;
    }
  }
  EXPECT_EQ(refused, 0) << "of " << kRounds * kProcesses << " processes";
}

TEST(Store, PlannedFilesStartNotRunAndFinishedFilesAreRecorded) {
  TempDir dir;
  Store s(dir / "r.db");
  auto id = s.begin_run(sample_run(), {"a/test_1.py", "test_2.py"});
  auto files = s.files(id);
  ASSERT_EQ(files.size(), 2U);
  EXPECT_FALSE(files[0].status);

  FileRecord f;
  f.path = "test_2.py";
  f.status = FileStatus::kCrashed;
  f.signal = 11;
  f.duration_s = 1.5;
  f.log_path = "logs/test_2.py.log";
  f.note = "killed by SIGSEGV";
  s.record_file(id, f);
  s.finish_run(id, "failed", "2026-11-21T00:01:00Z");

  files = s.files(id);
  EXPECT_EQ(files[1].status, FileStatus::kCrashed);
  EXPECT_EQ(files[1].signal, 11);
  EXPECT_FALSE(files[1].exit_code);
  EXPECT_EQ(files[1].note, "killed by SIGSEGV");
  auto run = s.run(id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "failed");
  EXPECT_EQ(run->targets, std::vector<std::string>{"pipelines"});
  EXPECT_EQ(run->command_line.size(), 3U);
  EXPECT_EQ(s.runs().size(), 1U);
}

// Issue 17: a traceback printed by many tests is stored once (table texts, migration 8), and
// FileWriter writes many files in one transaction.
TEST(Store, RepeatedTracebacksAreStoredOnceAndReadBackWhole) {
  TempDir dir;
  Store s(dir / "r.db");
  auto id = s.begin_run(sample_run(), {"test_a.py", "test_b.py"});
  TestCase c;
  c.classname = "tests.test_a.T";
  c.name = "test_x";
  c.status = CaseStatus::kFailed;
  c.exception = "AssertionError";
  c.message = "0.79 not less than or equal to 1e-05";
  c.traceback = "Traceback (most recent call last):\n  ...\nAssertionError: 0.79";
  TestCase other = c;
  other.name = "test_y";
  other.traceback = "Traceback (most recent call last):\n  other\n";
  {
    Store::FileWriter w(s, id);
    FileRecord a;
    a.path = "test_a.py";
    a.status = FileStatus::kFailed;
    w.add(a, {c, c, other});
    FileRecord b;
    b.path = "test_b.py";
    b.status = FileStatus::kFailed;
    c.classname = "tests.test_b.T";
    w.add(b, {c});
    w.commit();
  }
  auto cases = s.cases(id);
  ASSERT_EQ(cases.size(), 4U);
  EXPECT_EQ(cases[0].test.traceback, c.traceback);
  EXPECT_EQ(cases[2].test.traceback, other.traceback);
  EXPECT_EQ(cases[3].test.traceback, c.traceback);
  sql::Database db(dir / "r.db");
  sql::Statement n(db,
                   "SELECT count(*), (SELECT count(*) FROM cases WHERE traceback IS NULL) "
                   "FROM texts");
  ASSERT_TRUE(n.step());
  EXPECT_EQ(n.int64(0), 2);
  EXPECT_EQ(n.int64(1), 4);
  n.reset();  // ends its read transaction: later reads see later writes

  // A FileWriter destroyed without commit() writes nothing.
  {
    Store::FileWriter w(s, id);
    FileRecord a;
    a.path = "test_a.py";
    a.status = FileStatus::kPassed;
    w.add(a, {});
  }
  EXPECT_EQ(s.files(id)[0].status, FileStatus::kFailed);
  EXPECT_EQ(s.cases(id).size(), 4U);

  // Pruning the run deletes the texts no case uses any more.
  s.delete_runs({id});
  sql::Statement left(db, "SELECT count(*) FROM texts");
  ASSERT_TRUE(left.step());
  EXPECT_EQ(left.int64(0), 0);
}

TEST(Store, FileStatusCountsCountEachStatusAndTheFilesNotRunYet) {
  TempDir dir;
  Store s(dir / "r.db");
  auto id = s.begin_run(sample_run(), {"a.py", "b.py", "c.py", "d.py"});
  auto other = s.begin_run(sample_run(), {"a.py"});
  EXPECT_EQ(s.file_status_counts(id), (std::map<std::string, int>{{"not_run", 4}}));
  for (const auto& [path, status] :
       {std::pair{"a.py", FileStatus::kFailed}, std::pair{"b.py", FileStatus::kFailed},
        std::pair{"c.py", FileStatus::kPassed}}) {
    FileRecord f;
    f.path = path;
    f.status = status;
    s.record_file(id, f);
  }
  EXPECT_EQ(s.file_status_counts(id),
            (std::map<std::string, int>{{"failed", 2}, {"not_run", 1}, {"passed", 1}}));
  EXPECT_EQ(s.file_status_counts(other), (std::map<std::string, int>{{"not_run", 1}}));
  EXPECT_TRUE(s.file_status_counts(id + 100).empty());
}

TEST(Store, ARunLeftRunningByADeadRunnerBecomesInterrupted) {
  TempDir dir;
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  std::int64_t stale_id = 0;
  std::int64_t live_id = 0;
  {
    Store s(dir / "r.db");
    RunRecord stale = sample_run();
    stale.runner_pid = dead;
    stale_id = s.begin_run(stale, {});
    live_id = s.begin_run(sample_run(), {});  // this process: alive
  }
  Store reopened(dir / "r.db");
  EXPECT_EQ(reopened.run(stale_id)->status, "interrupted");
  EXPECT_EQ(reopened.run(live_id)->status, "running");
}

TEST(Store, RefusesADatabaseFromANewerRunner) {
  TempDir dir;
  {
    sql::Database db(dir / "r.db");
    db.exec("PRAGMA user_version = 999");
  }
  EXPECT_THROW(Store(dir / "r.db"), RuntimeError);
}

TEST(Iso8601, FormatsUtc) {
  EXPECT_EQ(iso8601_utc(std::chrono::system_clock::time_point{}), "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace devshim
