#include "runner/results/store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "runner/results/redirection_record.h"
#include "runner/results/sqlite.h"
#include "runner/results/store_identity.h"
#include "tests/runner/results/schema_rewind.h"
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
  }
  rewind_to_schema_11(path);
  {
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
        } catch (const std::exception& e) {
          std::fprintf(stderr, "refused: %s\n", e.what());  // why, in ctest's output
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

// Issue 17: a traceback or message printed by many tests is stored once (table texts, migrations
// 8 and 12), and FileWriter writes many files in one transaction.
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
  EXPECT_EQ(cases[3].test.message, c.message);
  sql::Statement n(db,
                   "SELECT count(*), (SELECT count(*) FROM results WHERE traceback IS NULL "
                   "AND message IS NULL) FROM texts");
  ASSERT_TRUE(n.step());
  EXPECT_EQ(n.int64(0), 3);  // two tracebacks, one message
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

std::string query_text(sql::Database& db, const std::string& sql) {
  sql::Statement q(db, sql);
  return q.step() ? q.text(0) : "(no row)";
}

// Schema 17: a test's contact with CUDA (results.cuda_path 0, 1, 2) and whether it failed in a
// CUDA-only branch (results.cuda_branch) come back as written, in full and by status; a database
// of schema 16 gains the column, 0 for the rows it had, and keeps their contact.
TEST(Store, ATestsCudaContactAndBranchAreStoredAndOlderDatabasesGainTheColumn) {
  TempDir dir;
  const auto path = dir / "results.db";
  std::int64_t id = 0;
  auto case_named = [](const char* name, CaseStatus status, CudaContact contact, bool branch) {
    TestCase t;
    t.classname = "tests.test_a";
    t.name = name;
    t.status = status;
    t.cuda_contact = contact;
    t.fails_in_cuda_branch = branch;
    return t;
  };
  {
    Store s(path);
    id = s.begin_run(sample_run(), {"test_a.py"});
    FileRecord f;
    f.path = "test_a.py";
    f.status = FileStatus::kFailed;
    s.record_file(id, f,
                  {case_named("test_work", CaseStatus::kPassed, CudaContact::kDeviceWork, false),
                   case_named("test_asked", CaseStatus::kFailed, CudaContact::kAsked, true),
                   case_named("test_none", CaseStatus::kPassed, CudaContact::kNone, false)});
    const auto cases = s.cases(id);
    ASSERT_EQ(cases.size(), 3U);
    EXPECT_EQ(cases[0].test.cuda_contact, CudaContact::kDeviceWork);
    EXPECT_EQ(cases[1].test.cuda_contact, CudaContact::kAsked);
    EXPECT_TRUE(cases[1].test.fails_in_cuda_branch);
    EXPECT_EQ(cases[2].test.cuda_contact, CudaContact::kNone);
    const RunResultStatuses statuses = s.result_statuses(id);
    ASSERT_EQ(statuses.rows.size(), 3U);
    EXPECT_EQ(statuses.rows[0].cuda_contact, CudaContact::kDeviceWork);
    EXPECT_EQ(statuses.rows[1].cuda_contact, CudaContact::kAsked);
    EXPECT_TRUE(statuses.rows[1].fails_in_cuda_branch);
    EXPECT_FALSE(statuses.rows[2].fails_in_cuda_branch);
  }
  {
    sql::Database db(path);
    EXPECT_EQ(query_text(db, "SELECT group_concat(cuda_path || cuda_branch, ',') FROM cases"),
              "10,21,00");
    // Schema 16's view named no cuda_branch; migration 17 makes it again.
    db.exec(
        "DROP VIEW cases; ALTER TABLE results DROP COLUMN cuda_branch; "
        "CREATE VIEW cases AS SELECT id FROM results; PRAGMA user_version = 16");
  }
  Store s(path);
  const auto cases = s.cases(id);
  ASSERT_EQ(cases.size(), 3U);
  EXPECT_EQ(cases[1].test.cuda_contact, CudaContact::kAsked);
  EXPECT_FALSE(cases[1].test.fails_in_cuda_branch);
  sql::Database db(path);
  EXPECT_EQ(query_text(db, "SELECT group_concat(cuda_branch, ',') FROM cases"), "0,0,0");
}

// What one stored case reads back as, in one comparable string.
std::string case_text(const StoredCase& sc) {
  const TestCase& c = sc.test;
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}:{}|{}|{}", sc.file, c.classname, c.name,
                     to_string(c.status), c.duration_s, c.exception, c.message, c.traceback,
                     sc.signature, c.source.path, c.source.line, c.culprit, sc.flaky);
}

std::vector<std::string> case_texts(Store& s, std::int64_t run_id) {
  std::vector<std::string> out;
  for (const StoredCase& sc : s.cases(run_id)) out.push_back(case_text(sc));
  return out;
}

// Migration 12 moves every case of schema 11 into results, tests, classes and names: each reads
// back as it was written (statuses, messages, tracebacks, culprits, flaky marks, order), the
// cases view shows schema 11's columns, and the next file's results follow the migrated ones.
TEST(Store, MigrationTwelveKeepsEveryCase) {
  TempDir dir;
  const auto path = dir / "results.db";
  std::int64_t id = 0;
  std::vector<std::string> before;
  std::map<CaseStatus, std::size_t> counts;
  {
    Store s(path);
    id = s.begin_run(sample_run(), {"test_a.py", "test_b.py", "test_c.py"});
    std::vector<TestCase> cases;
    const std::array statuses{CaseStatus::kPassed,  CaseStatus::kFailed,  CaseStatus::kError,
                              CaseStatus::kSkipped, CaseStatus::kXfailed, CaseStatus::kXpassed};
    for (CaseStatus status : statuses) {
      TestCase c;
      c.classname = "tests.test_a.T";
      c.name = fmt::format("test_{}", to_string(status));
      c.status = status;
      c.duration_s = 0.25;
      if (status != CaseStatus::kPassed) c.message = "needs CUDA";
      if (is_failure(status)) {
        c.exception = "RuntimeError";
        c.traceback = "Traceback (most recent call last):\n  x\nRuntimeError: needs CUDA";
        c.source = {"tests/test_a.py", 12};
      }
      cases.push_back(c);
    }
    cases.back().culprit = "crashed";
    cases.back().status = CaseStatus::kError;
    FileRecord a;
    a.path = "test_a.py";
    a.status = FileStatus::kCrashed;
    TestCase other = cases[1];  // the same test name in another class
    other.classname = "tests.test_b.T";
    FileRecord b;
    b.path = "test_b.py";
    b.status = FileStatus::kFailed;
    {
      Store::FileWriter w(s, id);
      w.add(a, cases);
      w.add(b, {other, cases[0]});
      w.commit();
    }
    RerunResult rerun;
    rerun.path = "test_a.py";
    TestCase now_passes = cases[1];
    now_passes.status = CaseStatus::kPassed;
    rerun.flaky = {now_passes};
    s.record_reruns(id, rerun);
    before = case_texts(s, id);
    counts = s.case_counts(id);
  }
  ASSERT_EQ(before.size(), 8U);
  rewind_to_schema_11(path);
  {
    sql::Database db(path);
    EXPECT_EQ(query_text(db, "SELECT type FROM sqlite_schema WHERE name = 'cases'"), "table");
  }

  Store s(path);
  EXPECT_EQ(case_texts(s, id), before);
  EXPECT_EQ(s.case_counts(id), counts);
  auto history = s.test_history("tests.test_a.T.test_failed", "", 10, "");
  ASSERT_EQ(history.size(), 1U);
  EXPECT_TRUE(history[0].flaky);
  EXPECT_EQ(s.test_history("test_failed", "", 10, "").size(), 2U);
  FileRecord c;
  c.path = "test_c.py";
  c.status = FileStatus::kPassed;
  TestCase t;
  t.classname = "tests.test_a.T";
  t.name = "test_passed";
  s.record_file(id, c, {t});
  EXPECT_EQ(s.cases(id).size(), 9U);

  sql::Database db(path);
  EXPECT_EQ(query_text(db, "SELECT type FROM sqlite_schema WHERE name = 'cases'"), "view");
  EXPECT_EQ(query_text(db,
                       "SELECT group_concat(status, ',') FROM (SELECT status FROM cases "
                       "WHERE file_id = (SELECT id FROM files WHERE path = 'test_a.py') "
                       "ORDER BY id)"),
            "passed,passed,error,skipped,xfailed,error");
  EXPECT_EQ(query_text(db,
                       "SELECT count(*) || ' ' || (SELECT count(*) FROM classes) || ' ' || "
                       "(SELECT count(*) FROM names) FROM tests"),
            "7 2 6");
}

// FileWriter writes results kResultBatch rows at a time: a file of more rows than that, and one
// of fewer, read back whole and in order; a file added again in the same writer replaces the
// rows it had, also those still waiting for their batch.
TEST(Store, ResultsWrittenInBatchesReadBackInOrderAndAFileAddedAgainReplacesThem) {
  TempDir dir;
  Store s(dir / "r.db");
  auto id = s.begin_run(sample_run(), {"test_a.py", "test_b.py"});
  auto tests_named = [](const std::string& prefix, std::size_t n) {
    std::vector<TestCase> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      out[i].classname = "tests.T";
      out[i].name = fmt::format("{}_{:03}", prefix, i);
      out[i].status = i % 5 == 0 ? CaseStatus::kSkipped : CaseStatus::kPassed;
      if (i % 5 == 0) out[i].message = "needs CUDA";
    }
    return out;
  };
  constexpr std::size_t kMany = Store::FileWriter::kResultBatch * 2 + 7;
  {
    Store::FileWriter w(s, id);
    FileRecord a;
    a.path = "test_a.py";
    a.status = FileStatus::kPassed;
    w.add(a, tests_named("first", 5));     // waits for a batch...
    w.add(a, tests_named("test", kMany));  // ...and is replaced
    FileRecord b;
    b.path = "test_b.py";
    b.status = FileStatus::kPassed;
    w.add(b, tests_named("test_b", 3));
    w.commit();
  }
  auto cases = s.cases(id);
  ASSERT_EQ(cases.size(), kMany + 3);
  for (std::size_t i = 0; i < kMany; ++i) {
    EXPECT_EQ(cases[i].file, "test_a.py");
    EXPECT_EQ(cases[i].test.name, fmt::format("test_{:03}", i));
    EXPECT_EQ(cases[i].test.message, i % 5 == 0 ? "needs CUDA" : "");
  }
  EXPECT_EQ(cases[kMany + 2].test.name, "test_b_002");
}

// The tests a continuation after a crash ran join the file's: its cases, record and redirections
// stay (runner/engine/continuation.h).
TEST(Store, CasesAddedToARecordedFileJoinItsCasesAndKeepItsRecord) {
  TempDir dir;
  Store s(dir / "r.db");
  auto id = s.begin_run(sample_run(), {"test_a.py"});
  FileRecord a;
  a.path = "test_a.py";
  a.status = FileStatus::kCrashed;
  a.signal = 9;
  a.note = "killed by SIGKILL";
  TestCase before;
  before.classname = "tests.test_a";
  before.name = "test_1";
  before.status = CaseStatus::kPassed;
  TestCase culprit;
  culprit.classname = "tests.test_a";
  culprit.name = "test_2";
  culprit.status = CaseStatus::kError;
  culprit.culprit = "crashed";
  Redirection r;
  r.api = "torch.zeros";
  r.requested = "cuda";
  r.used = "cpu";
  r.count = 3;
  r.shim = "python";
  s.record_file(id, a, {before, culprit}, {r});

  TestCase after;
  after.classname = "tests.test_a";
  after.name = "test_3";
  after.status = CaseStatus::kFailed;
  after.exception = "AssertionError";
  after.message = "after the crash";
  s.add_cases(id, "test_a.py", {after}, "killed by SIGKILL; continued after the crash: 1 more");

  const auto cases = s.cases(id);
  ASSERT_EQ(cases.size(), 3U);
  EXPECT_EQ(cases[0].test.name, "test_1");
  EXPECT_EQ(cases[1].test.culprit, "crashed");
  EXPECT_EQ(cases[2].test.name, "test_3");
  EXPECT_FALSE(cases[2].signature.empty()) << "a failure added later gets its signature";
  const auto files = s.files(id);
  EXPECT_EQ(files[0].status, FileStatus::kCrashed);
  EXPECT_EQ(files[0].signal, 9);
  EXPECT_EQ(files[0].note, "killed by SIGKILL; continued after the crash: 1 more");
  ASSERT_EQ(s.redirections(id).size(), 1U);
  EXPECT_EQ(s.redirections(id)[0].count, 3);
  EXPECT_THROW(s.add_cases(id, "test_none.py", {after}, ""), RuntimeError);
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
    db.exec(fmt::format("PRAGMA application_id = {}; PRAGMA user_version = 999", kApplicationId));
  }
  EXPECT_THROW(Store(dir / "r.db"), RuntimeError);
}

TEST(Iso8601, FormatsUtc) {
  EXPECT_EQ(iso8601_utc(std::chrono::system_clock::time_point{}), "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace devshim
