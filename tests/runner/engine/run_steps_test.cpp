// The run's steps (runner/engine/run_steps.h) against a fake CommandRunner that replays real
// captured logs (tests/parsers/fixtures, tests/runner/fixtures/run_steps) instead of starting
// processes: recording, the exit code, interruption and --resume, --rerun-failures and flaky tests,
// a locked database, --differential. The real processes' side of each is tested end to end
// (tests/e2e/faults_e2e_test.cpp, nightly_e2e_test.cpp, runner_e2e_test.cpp).
#include "runner/engine/run_steps.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <functional>
#include <limits>

#include "base/error.h"
#include "runner/cli/process_environment.h"
#include "runner/engine/run_suite.h"
#include "runner/results/sqlite.h"
#include "runner/results/status.h"
#include "runner/results/store.h"
#include "tests/support/recording_sink.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;

const fs::path kParserFixtures = PARSER_FIXTURES_DIR;
const fs::path kRunFixtures = RUN_STEPS_FIXTURES_DIR;

// How one process of a file ends: the real log it left and its exit.
struct Outcome {
  fs::path log;
  std::optional<int> exit_code;
  std::optional<int> signal;
};

// Stands in for ProcessPool: each spec "runs" by copying its file's next captured log to the
// spec's log path. Files are named by their log's name (logs/test_x.py.log → "test_x.py").
class FakeCommandRunner final : public CommandRunner {
 public:
  /// Each file's outcomes, one per time it runs (the last one repeats).
  std::map<std::string, std::vector<Outcome>> outcomes;
  /// A SIGINT arrives once this many processes have finished.
  std::size_t interrupt_after = std::numeric_limits<std::size_t>::max();
  /// Called before each process's on_finish, with the file's name.
  std::function<void(const std::string&)> before_finish;
  /// Called when a batch has run, before run() returns.
  std::function<void()> after_batch;
  /// The argv tail (after "-v") of every process, by batch.
  std::vector<std::vector<std::string>> batches;
  bool prepared = false;

  void prepare() override { prepared = true; }

  bool run(const std::vector<ProcessSpec>& specs, const PoolOptions& /*options*/,
           PoolObserver& observer) override {
    batches.emplace_back();
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (finished_ == interrupt_after) {
        observer.on_interrupt(SIGINT);
        return false;
      }
      const ProcessSpec& spec = specs[i];
      std::string name = spec.log_path.filename().string();
      name.resize(name.size() - 4);  // ".log"
      std::string tail;
      for (auto a = std::find(spec.argv.begin(), spec.argv.end(), "-v"); a != spec.argv.end();
           ++a) {
        tail += (tail.empty() ? "" : " ") + *a;
      }
      batches.back().push_back(tail);
      observer.on_start(i);
      const std::vector<Outcome>& mine = outcomes.at(name);
      const Outcome& o = mine[std::min(runs_[name]++, mine.size() - 1)];
      fs::create_directories(spec.log_path.parent_path());
      fs::copy_file(o.log, spec.log_path, fs::copy_options::overwrite_existing);
      ProcessResult r;
      r.exit_code = o.exit_code;
      r.signal = o.signal;
      r.duration_s = 0.25;
      r.started_at = r.finished_at = std::chrono::system_clock::now();
      if (before_finish) before_finish(name);
      observer.on_finish(i, r);
      observer.on_tick();
      ++finished_;
    }
    if (after_batch) after_batch();
    return true;
  }

 private:
  std::map<std::string, std::size_t> runs_;
  std::size_t finished_ = 0;
};

class FakeProbes final : public RunProbes {
 public:
  GitCheckout git_checkout(const fs::path& /*root*/) override { return {"abc123", ""}; }
  std::future<nlohmann::json> start_environment(const std::string& interpreter,
                                                const Environment& /*env*/,
                                                const fs::path& /*root*/) override {
    std::promise<nlohmann::json> found;
    found.set_value({{"python", "fake"}, {"interpreter", interpreter}});
    return found.get_future();
  }
};

Outcome parser_log(const std::string& name, std::optional<int> exit_code,
                   std::optional<int> signal = std::nullopt) {
  return {kParserFixtures / "unittest" / (name + ".log"), exit_code, signal};
}

class RunStepsTest : public ::testing::Test {
 protected:
  // A unittest suite over the sources of the captured logs.
  fs::path write_suite(const fs::path& sources) {
    const fs::path file = dir_ / "suite" / "suite.json";
    testing::write_file(file, R"({"name": "steps", "python": "python3", "project_root": ")" +
                                  sources.string() + R"(", "tests_dir": "tests"})");
    return file;
  }
  RunOptions options(const fs::path& sources, std::vector<std::string> targets) {
    RunOptions o;
    o.environment = runner_environment();
    o.environment.erase("TORCHDEVICE_POLICY");  // the test processes' environment
    o.suite = write_suite(sources);
    o.targets = std::move(targets);
    o.out_dir = dir_ / "out";
    o.db_path = dir_ / "results.db";
    o.jobs = 1;
    o.shim = false;
    testing::write_file(dir_ / "shim" / "sitecustomize.py", "");  // the processes are fakes
    o.shim_dir = dir_ / "shim";
    o.on_recorded = [this](Store&, std::int64_t run_id, const fs::path&) {
      recorded_.push_back(run_id);
      return std::vector<fs::path>{};
    };
    return o;
  }
  std::map<std::string, std::string> statuses(std::int64_t run_id) {
    std::map<std::string, std::string> out;
    for (const auto& f : Store(dir_ / "results.db").files(run_id)) {
      out[f.path] = f.status ? to_string(*f.status) : "not run";
    }
    return out;
  }

  testing::TempDir dir_;
  FakeCommandRunner processes_;
  FakeProbes probes_;
  testing::RecordingSink events_;
  RunServices services_{processes_, probes_, events_};
  std::vector<std::int64_t> recorded_;
};

TEST_F(RunStepsTest, PlanningStartsNothingAndOrdersEveryFile) {
  RunPlan plan =
      plan_run(options(kParserFixtures / "sources", {"test_ut_outcomes.py", "test_ut_passing.py"}));
  EXPECT_FALSE(processes_.prepared);
  ASSERT_EQ(plan.specs.size(), 2U);
  EXPECT_EQ(plan.files.size(), 2U);
  EXPECT_TRUE(fs::is_directory(dir_ / "out" / "logs"));
  EXPECT_TRUE(Store(dir_ / "results.db").runs(10).empty()) << "no run begins before execute_run";
  EXPECT_EQ(plan.run.mode, "baseline");
  EXPECT_EQ(plan.pool.jobs, 1);
}

// Issue 20: the shim's policy the test processes get is recorded and keys the comparison with
// earlier runs (Store::comparable_run); a baseline run has none.
TEST_F(RunStepsTest, AShimRunRecordsThePolicyItsTestProcessesGet) {
  RunOptions o = options(kParserFixtures / "sources", {"test_ut_passing.py"});
  testing::write_file(o.suite, R"({"name": "steps", "python": "python3", "project_root": ")" +
                                   (kParserFixtures / "sources").string() +
                                   R"(", "tests_dir": "tests", "env": {"TORCHDEVICE_POLICY": )"
                                   R"("accelerator-only"}})");
  EXPECT_EQ(plan_run(o).run.policy, "");
  o.shim = true;
  EXPECT_EQ(plan_run(o).run.policy, "accelerator-only");
  testing::write_file(o.suite, R"({"name": "steps", "python": "python3", "project_root": ")" +
                                   (kParserFixtures / "sources").string() +
                                   R"(", "tests_dir": "tests"})");
  EXPECT_EQ(plan_run(o).run.policy, "default") << "unless the environment sets one";
}

TEST_F(RunStepsTest, RecordsEachFileFromItsLogAndFailsWhenOneFails) {
  processes_.outcomes = {{"test_ut_outcomes.py", {parser_log("test_ut_outcomes", 1)}},
                         {"test_ut_passing.py", {parser_log("test_ut_passing", 0)}},
                         {"test_ut_segfault.py", {parser_log("test_ut_segfault", {}, SIGSEGV)}}};
  const RunOptions o =
      options(kParserFixtures / "sources",
              {"test_ut_outcomes.py", "test_ut_passing.py", "test_ut_segfault.py"});
  EXPECT_EQ(run_suite(o, services_), kExitFailures);
  EXPECT_TRUE(processes_.prepared);
  ASSERT_EQ(recorded_.size(), 1U);
  const std::int64_t id = recorded_[0];
  EXPECT_EQ(statuses(id), (std::map<std::string, std::string>{{"test_ut_outcomes.py", "failed"},
                                                              {"test_ut_passing.py", "passed"},
                                                              {"test_ut_segfault.py", "crashed"}}));
  Store store(dir_ / "results.db");
  const RunRecord run = store.resolve_run(std::to_string(id));
  EXPECT_EQ(run.status, "failed");
  EXPECT_EQ(run.project_commit, "abc123");
  EXPECT_NE(run.environment.find("\"python\":\"fake\""), std::string::npos) << run.environment;
  // The fixtures' ground truth: 3 FAILs in test_ut_outcomes, 1 in test_ut_segfault.
  EXPECT_EQ(store.case_counts(id).at(CaseStatus::kFailed), 4U);
  const std::string log = testing::read_file(dir_ / "out" / "run.log");
  EXPECT_NE(log.find("Finished test: test_ut_segfault.py - Status: crashed (RC: -11)"),
            std::string::npos)
      << log;
}

TEST_F(RunStepsTest, PassesWhenEveryFilePasses) {
  processes_.outcomes = {{"test_ut_passing.py", {parser_log("test_ut_passing", 0)}}};
  EXPECT_EQ(run_suite(options(kParserFixtures / "sources", {"test_ut_passing.py"}), services_),
            kExitOk);
  EXPECT_EQ(Store(dir_ / "results.db").resolve_run("latest").status, "passed");
}

// --failed-first: the previous comparable run's failing files start first (the order itself is
// schedule_test's OrderFiles; this is the run reading its previous run's failures).
TEST_F(RunStepsTest, FailedFirstStartsThePreviousRunsFailingFilesFirst) {
  processes_.outcomes = {{"test_ut_passing.py", {parser_log("test_ut_passing", 0)}},
                         {"test_ut_segfault.py", {parser_log("test_ut_segfault", {}, SIGSEGV)}}};
  RunOptions o =
      options(kParserFixtures / "sources", {"test_ut_passing.py", "test_ut_segfault.py"});
  EXPECT_EQ(run_suite(o, services_), kExitFailures);
  o.out_dir = dir_ / "out2";
  EXPECT_EQ(run_suite(o, services_), kExitFailures);
  o.out_dir = dir_ / "out3";
  o.failed_first = true;
  EXPECT_EQ(run_suite(o, services_), kExitFailures);
  ASSERT_EQ(processes_.batches.size(), 3U);
  for (const auto& batch : processes_.batches) ASSERT_EQ(batch.size(), 2U);
  EXPECT_NE(processes_.batches[1][0].find("test_ut_passing"), std::string::npos)
      << "without --failed-first, the recorded durations (equal) and the path decide";
  EXPECT_NE(processes_.batches[2][0].find("test_ut_segfault"), std::string::npos)
      << "the failing file first";
}

TEST_F(RunStepsTest, AnInterruptedRunResumesOnlyItsUnfinishedFiles) {
  processes_.outcomes = {{"test_ut_outcomes.py", {parser_log("test_ut_outcomes", 1)}},
                         {"test_ut_passing.py", {parser_log("test_ut_passing", 0)}},
                         {"test_ut_subtests.py", {parser_log("test_ut_subtests", 1)}}};
  processes_.interrupt_after = 1;
  RunOptions o = options(kParserFixtures / "sources",
                         {"test_ut_outcomes.py", "test_ut_passing.py", "test_ut_subtests.py"});
  EXPECT_EQ(run_suite(o, services_), kExitInterrupted);
  const std::int64_t id = recorded_.at(0);
  EXPECT_EQ(Store(dir_ / "results.db").resolve_run("latest").status, "interrupted");
  std::size_t unfinished = 0;
  for (const auto& [path, status] : statuses(id)) unfinished += status == "not run" ? 1 : 0;
  EXPECT_EQ(unfinished, 2U);

  processes_.interrupt_after = std::numeric_limits<std::size_t>::max();
  processes_.batches.clear();
  RunOptions resume = options(kParserFixtures / "sources", {});
  resume.out_dir.reset();
  resume.resume = "latest";
  EXPECT_EQ(run_suite(resume, services_), kExitFailures);
  ASSERT_EQ(processes_.batches.size(), 1U);
  EXPECT_EQ(processes_.batches[0].size(), 2U) << "only the files without a result run again";
  EXPECT_EQ(recorded_.back(), id) << "the same run, finished";
  for (const auto& [path, status] : statuses(id)) EXPECT_NE(status, "not run") << path;
  // The closing lines count the whole run, its first session included.
  const std::vector<RunRecorded> recorded = events_.all<RunRecorded>();
  ASSERT_FALSE(recorded.empty());
  EXPECT_EQ(recorded.back().status, "failed");
  EXPECT_EQ(recorded.back().files, 3U);
  EXPECT_NE(recorded.back().file_counts.find("2 failed"), std::string::npos)
      << recorded.back().file_counts;
}

TEST_F(RunStepsTest, AFailingTestThatPassesOnItsRerunIsFlaky) {
  processes_.outcomes = {{"test_flaky.py",
                          {{kRunFixtures / "logs/test_flaky.attempt1.log", 1, {}},
                           {kRunFixtures / "logs/test_flaky.attempt2.log", 0, {}}}}};
  RunOptions o = options(kRunFixtures / "sources", {"test_flaky.py"});
  o.rerun_failures = 2;
  EXPECT_EQ(run_suite(o, services_), kExitOk) << "its only failure was flaky";
  ASSERT_EQ(processes_.batches.size(), 2U) << "one rerun was enough";
  EXPECT_EQ(processes_.batches[1],
            std::vector<std::string>{"-v tests.test_flaky.FlakyTest.test_sometimes"})
      << "the rerun names the failing test alone";
  Store store(dir_ / "results.db");
  const std::int64_t id = recorded_.at(0);
  EXPECT_EQ(statuses(id).at("test_flaky.py"), "passed");
  bool flaky = false;
  for (const StoredCase& c : store.cases(id)) {
    if (c.test.name == "test_sometimes") flaky = c.flaky;
  }
  EXPECT_TRUE(flaky);
  EXPECT_EQ(store.attempts(id).size(), 2U);
}

TEST_F(RunStepsTest, ATestStillFailingOnEveryRerunFailsTheRun) {
  processes_.outcomes = {
      {"test_flaky.py", {{kRunFixtures / "logs/test_flaky.attempt1.log", 1, {}}}}};
  RunOptions o = options(kRunFixtures / "sources", {"test_flaky.py"});
  o.rerun_failures = 2;
  EXPECT_EQ(run_suite(o, services_), kExitFailures);
  EXPECT_EQ(processes_.batches.size(), 3U) << "the first run and two reruns";
  EXPECT_EQ(statuses(recorded_.at(0)).at("test_flaky.py"), "failed");
}

// Locks the database from another connection while the run records its files.
class LockedDatabaseTest : public RunStepsTest {
 protected:
  void SetUp() override { sql::set_default_busy_ms(50); }
  void TearDown() override {
    lock_.reset();
    sql::set_default_busy_ms(0);
  }
  void lock() {
    lock_ = std::make_unique<sql::Database>(dir_ / "results.db");
    lock_->exec("BEGIN EXCLUSIVE");
  }
  std::unique_ptr<sql::Database> lock_;
};

TEST_F(LockedDatabaseTest, ResultsWaitInMemoryUntilTheDatabaseIsFree) {
  processes_.outcomes = {{"test_ut_outcomes.py", {parser_log("test_ut_outcomes", 1)}},
                         {"test_ut_passing.py", {parser_log("test_ut_passing", 0)}}};
  processes_.before_finish = [this](const std::string&) {
    if (lock_) {
      lock_.reset();  // the second file finds the database free again
    } else {
      lock();  // the first file's results wait
    }
  };
  const RunOptions o =
      options(kParserFixtures / "sources", {"test_ut_outcomes.py", "test_ut_passing.py"});
  EXPECT_EQ(run_suite(o, services_), kExitFailures);
  // Whichever of the two ran first, both are recorded once the lock is gone.
  for (const auto& [path, status] : statuses(recorded_.at(0))) EXPECT_NE(status, "not run");
  EXPECT_NE(testing::read_file(dir_ / "out" / "run.log").find("Database locked"),
            std::string::npos);
}

TEST_F(LockedDatabaseTest, ResultsStillWaitingWhenTheLastFileEndsAreRecordedOnceItIsFree) {
  processes_.outcomes = {{"test_ut_passing.py", {parser_log("test_ut_passing", 0)}}};
  processes_.before_finish = [this](const std::string&) { lock(); };
  processes_.after_batch = [this] { lock_.reset(); };
  EXPECT_EQ(run_suite(options(kParserFixtures / "sources", {"test_ut_passing.py"}), services_),
            kExitOk);
  EXPECT_EQ(statuses(recorded_.at(0)).at("test_ut_passing.py"), "passed");
}

TEST_F(LockedDatabaseTest, ADatabaseThatStaysLockedNamesTheResumeCommand) {
  processes_.outcomes = {{"test_ut_passing.py", {parser_log("test_ut_passing", 0)}}};
  processes_.before_finish = [this](const std::string&) { lock(); };
  const RunOptions o = options(kParserFixtures / "sources", {"test_ut_passing.py"});
  try {
    run_suite(o, services_);
    FAIL() << "no error";
  } catch (const sql::BusyError& e) {
    EXPECT_NE(std::string(e.what()).find("--resume 1"), std::string::npos) << e.what();
  }
}

TEST_F(RunStepsTest, DifferentialRunsTheBaselineThenTheShimAgainstIt) {
  processes_.outcomes = {{"test_ut_passing.py", {parser_log("test_ut_passing", 0)}}};
  RunOptions o = options(kParserFixtures / "sources", {"test_ut_passing.py"});
  o.shim = true;
  const DifferentialRun both = run_differential(o, "", services_);
  EXPECT_EQ(both.exit_code, kExitOk);
  ASSERT_GT(both.baseline_run, 0);
  ASSERT_GT(both.shim_run, both.baseline_run);
  Store store(dir_ / "results.db");
  const RunRecord baseline = store.resolve_run(std::to_string(both.baseline_run));
  const RunRecord shim = store.resolve_run(std::to_string(both.shim_run));
  EXPECT_EQ(baseline.mode, "baseline");
  EXPECT_EQ(fs::path(baseline.out_dir), dir_ / "out" / "baseline");
  EXPECT_EQ(shim.mode, "shim");
  EXPECT_EQ(shim.baseline_run, both.baseline_run);

  // --baseline: compared with a recorded baseline run, made no more; never with a shim run.
  const DifferentialRun again = run_differential(o, std::to_string(both.baseline_run), services_);
  EXPECT_EQ(again.baseline_run, both.baseline_run);
  EXPECT_EQ(store.resolve_run("latest").baseline_run, both.baseline_run);
  EXPECT_THROW(run_differential(o, std::to_string(both.shim_run), services_), UsageError);
}

TEST_F(RunStepsTest, AnInterruptedBaselineMakesNoShimRun) {
  processes_.outcomes = {{"test_ut_passing.py", {parser_log("test_ut_passing", 0)}}};
  processes_.interrupt_after = 0;
  RunOptions o = options(kParserFixtures / "sources", {"test_ut_passing.py"});
  o.shim = true;
  const DifferentialRun both = run_differential(o, "", services_);
  EXPECT_EQ(both.exit_code, kExitInterrupted);
  EXPECT_EQ(both.shim_run, 0);
  EXPECT_EQ(Store(dir_ / "results.db").runs(10).size(), 1U);
}

TEST_F(RunStepsTest, AnUnknownPreviousRunIsBadInputBeforeAnythingIsCreated) {
  RunOptions o = options(kParserFixtures / "sources", {"test_ut_passing.py"});
  o.previous = "42";
  EXPECT_THROW(plan_run(o), UsageError);
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// --resume and --previous name runs of a database; one that does not exist is bad input, and is
// not created empty on the way.
TEST_F(RunStepsTest, AMissingDatabaseIsBadInputForResumeAndPrevious) {
  for (const bool resume : {true, false}) {
    RunOptions o = options(kParserFixtures / "sources", {"test_ut_passing.py"});
    (resume ? o.resume : o.previous) = "latest";
    try {
      plan_run(o);
      ADD_FAILURE() << "planned a run against a missing database";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("no such database, so no run for " +
                                           std::string(resume ? "--resume" : "--previous")),
                std::string::npos)
          << e.what();
    }
    EXPECT_FALSE(fs::exists(dir_ / "results.db"));
    EXPECT_FALSE(fs::exists(dir_ / "out"));
  }
}

}  // namespace
}  // namespace devshim
