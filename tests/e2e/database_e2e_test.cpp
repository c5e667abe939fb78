// The database as the commands meet it (issue 34): a write that fails is said in words with what
// to do, never as SQL; prune says it deleted only what it deleted; a file that is not devshim's
// is never changed, by a reading command or a writing one; an older devshim database gains its
// identity.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/results/sqlite.h"
#include "runner/results/store.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::read_file;
namespace fs = std::filesystem;

// The words of the statements the runner runs: none may reach a person.
void expect_no_sql(const std::string& output) {
  for (const char* sql : {"INSERT", "UPDATE", "DELETE", "SELECT", "PRAGMA", "CREATE"}) {
    EXPECT_EQ(output.find(sql), std::string::npos) << sql << " in: " << output;
  }
}

class DatabaseE2E : public E2EFixture {
 protected:
  testing::RunResult quick_run(const fs::path& out_dir) {
    return testing::run(
        {RUNNER_PATH, (kSuites / "slow").string(), "--db", db().string(), "--out", out_dir.string(),
         "--python", SUITE_PYTHON, "--no-shim", "-j", "1", "test_a_quick.py"},
        env());
  }
};

TEST_F(DatabaseE2E, ARunIntoAReadOnlyDatabaseSaysWhatToDoWithoutSql) {
  // The database's folder is writable (SQLite's WAL index can be made), the file is not.
  const fs::path shared = dir_ / "shared";
  fs::create_directories(shared);
  const fs::path database = shared / "results.db";
  // A copy of the suite the other user can read wherever the checkout lies (a clone in a
  // `mktemp -d` folder is root's alone).
  const fs::path suite = dir_ / "slow";
  fs::copy(kSuites / "slow", suite, fs::copy_options::recursive);
  auto r = testing::run(
      {RUNNER_PATH, suite.string(), "--db", database.string(), "--out", (dir_ / "first").string(),
       "--python", SUITE_PYTHON, "--no-shim", "test_a_quick.py"},
      env());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> argv = as_unprivileged_user();
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(database.c_str(), 0444), 0);
  const fs::path out_dir = shared / "second";
  // The venv's interpreter may lie in a folder only root can enter; the test never gets to run.
  const std::string python = ::geteuid() == 0 ? "python3" : SUITE_PYTHON;
  for (const std::string& arg :
       {std::string(RUNNER_PATH), suite.string(), std::string("--db"), database.string(),
        std::string("--out"), out_dir.string(), std::string("--python"), python,
        std::string("--no-shim"), std::string("test_a_quick.py")}) {
    argv.push_back(arg);
  }
  r = testing::run(argv, env());
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0700), 0);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(database.string() + ": the database is read-only for this user"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("give a writable --db or change its permissions"), std::string::npos)
      << r.output;
  expect_no_sql(r.output);
  EXPECT_FALSE(fs::exists(out_dir / "logs/test_a_quick.py.log")) << "a test ran";
}

TEST_F(DatabaseE2E, APruneWhoseDeleteFailsSaysNothingWasDeleted) {
  ASSERT_EQ(quick_run(dir_ / "run1").exit_code, 0);
  ASSERT_EQ(quick_run(dir_ / "run2").exit_code, 0);
  {
    // Something the runner did not make refuses the delete (as a full disk or a lost lock would).
    sql::Database database(db());
    database.exec(
        "CREATE TRIGGER keep_runs BEFORE DELETE ON runs "
        "BEGIN SELECT RAISE(ABORT, 'runs are kept here'); END");
  }
  auto r = testing::run({RUNNER_PATH, "prune", "--keep", "1", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("deleting"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("deleted run"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(db().string() + ": cannot write to it: runs are kept here"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("nothing was pruned: no run, log or report deleted"), std::string::npos)
      << r.output;
  expect_no_sql(r.output);
  EXPECT_TRUE(fs::exists(dir_ / "run1/run.log"));
  EXPECT_EQ(Store(db()).runs(10).size(), 2U);

  // Without the trigger, the same prune says what it deleted, after deleting it.
  sql::Database(db()).exec("DROP TRIGGER keep_runs");
  r = testing::run({RUNNER_PATH, "prune", "--keep", "1", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("runner: deleted run 1 of e2e-slow"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "run1"));
}

// The bytes of a file, or "" when it is not there.
std::string bytes_of(const fs::path& path) { return fs::exists(path) ? read_file(path) : ""; }

std::int64_t application_id(const fs::path& path) {
  sql::Database database(path, sql::Access::kRead);
  sql::Statement s(database, "PRAGMA application_id");
  return s.step() ? s.int64(0) : -1;
}

TEST_F(DatabaseE2E, AnotherProgramsDatabaseIsNeverChanged) {
  const fs::path other = dir_ / "other.db";
  sql::Database(other).exec(
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); "
      "INSERT INTO notes (text) VALUES ('mine')");
  const std::string before = bytes_of(other);
  auto unchanged = [&] {
    EXPECT_EQ(bytes_of(other), before);
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
      EXPECT_FALSE(fs::exists(other.string() + suffix)) << suffix;
    }
  };
  // Reading commands: refused, the file only read.
  for (const std::vector<std::string>& command : {std::vector<std::string>{"runs"},
                                                  {"show", "latest"},
                                                  {"history", "test_quick"},
                                                  {"gaps", "list"},
                                                  {"compare", "1", "2"}}) {
    std::vector<std::string> argv{RUNNER_PATH};
    argv.insert(argv.end(), command.begin(), command.end());
    argv.insert(argv.end(), {"--db", other.string()});
    const auto r = testing::run(argv);
    EXPECT_EQ(r.exit_code, 2) << command[0] << ": " << r.output;
    EXPECT_NE(r.output.find(other.string() +
                            ": not a devshim results database but another program's SQLite file "
                            "(its tables: notes)"),
              std::string::npos)
        << command[0] << ": " << r.output;
    EXPECT_NE(r.output.find("it was only read, and is unchanged"), std::string::npos) << r.output;
    unchanged();
  }
  // Writing commands: refused before anything is written.
  auto r = testing::run({RUNNER_PATH, (kSuites / "slow").string(), "--db", other.string(), "--out",
                         out().string(), "--python", SUITE_PYTHON, "--no-shim", "test_a_quick.py"},
                        env());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("devshim writes only into its own database or an empty file, so "
                          "nothing was written to it"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(out() / "logs/test_a_quick.py.log")) << "a test ran";
  unchanged();
  r = testing::run({RUNNER_PATH, "prune", "--keep", "1", "--db", other.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = testing::run({RUNNER_PATH, "gaps", "set", "torch.x", "--note", "n", "--db", other.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  unchanged();

  // An empty file is no one's: a run records into it, and it becomes devshim's.
  const fs::path empty = dir_ / "empty.db";
  testing::write_file(empty, "");
  r = testing::run({RUNNER_PATH, (kSuites / "slow").string(), "--db", empty.string(), "--out",
                    out().string(), "--python", SUITE_PYTHON, "--no-shim", "test_a_quick.py"},
                   env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(application_id(empty), 0x44765368);
}

TEST_F(DatabaseE2E, ADatabaseOfAnOlderDevshimOpensAndGetsItsIdentity) {
  ASSERT_EQ(quick_run(out()).exit_code, 0);
  ASSERT_EQ(application_id(db()), 0x44765368);
  // As devshim left its databases before they carried an identity.
  sql::Database(db()).exec("PRAGMA application_id = 0");
  ASSERT_EQ(application_id(db()), 0);
  auto r = testing::run({RUNNER_PATH, "runs", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("e2e-slow"), std::string::npos) << r.output;
  EXPECT_EQ(application_id(db()), 0x44765368);
  // A reading command on a database of the current schema changes nothing.
  const std::string before = bytes_of(db());
  r = testing::run({RUNNER_PATH, "show", "latest", "--db", db().string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(bytes_of(db()), before);
}

}  // namespace
}  // namespace devshim
