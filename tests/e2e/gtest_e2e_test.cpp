// The real runner on a GoogleTest suite (tests/e2e/suites/gtest, binaries built by CMake into
// E2E_GTEST_ROOT/bin): statuses, source lines, a crashing binary (culprit, earlier tests kept), a
// hanging one (timeout), and shards that give the same results as one process per binary.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
namespace fs = std::filesystem;

const fs::path kSuite = fs::path(E2E_SUITES_DIR) / "gtest";
const fs::path kRoot = E2E_GTEST_ROOT;

// 1-based line of the first line of src/<file> that contains marker.
int line_of(const std::string& file, const std::string& marker) {
  std::ifstream in(kRoot / "src" / file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(marker) != std::string::npos) return n;
  }
  return 0;
}

class GtestE2E : public ::testing::Test {
 protected:
  fs::path db() const { return dir_ / "results.db"; }
  fs::path out() const { return dir_ / "out"; }

  testing::RunResult run_runner(const fs::path& suite, const std::vector<std::string>& extra) {
    std::vector<std::string> argv{RUNNER_PATH, suite.string(), "--db",     db().string(),
                                  "--out",     out().string(), "--python", SUITE_PYTHON};
    argv.insert(argv.end(), extra.begin(), extra.end());
    fs::remove_all(out());
    return testing::run(argv, {{"E2E_GTEST_ROOT", kRoot.string()}, {"NO_COLOR", "1"}}, 100s);
  }
  std::map<std::string, FileRecord> files(std::int64_t run_id) {
    std::map<std::string, FileRecord> out;
    for (auto& f : Store(db()).files(run_id)) out[f.path] = f;
    return out;
  }
  std::map<std::string, StoredCase> cases(std::int64_t run_id) {
    std::map<std::string, StoredCase> out;
    for (auto& c : Store(db()).cases(run_id)) out[c.test.classname + "." + c.test.name] = c;
    return out;
  }
  std::int64_t last_run() { return Store(db()).runs(1).at(0).id; }

  TempDir dir_;
};

TEST_F(GtestE2E, StatusesSourceLinesCrashAndTimeout) {
  auto r = run_runner(
      kSuite, {"-j", "2", "--timeout", "3", "--kill-grace", "1", "--continue-after-crash", "0"});
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const std::int64_t run = last_run();
  auto f = files(run);
  ASSERT_EQ(f.size(), 4U) << r.output;
  auto status = [&](const std::string& p) {
    return f.at(p).status ? std::string(to_string(*f.at(p).status)) : "not run";
  };
  EXPECT_EQ(status("pass_test"), "failed");
  EXPECT_EQ(status("many_test"), "failed");
  EXPECT_EQ(status("crash_test"), "crashed");
  EXPECT_EQ(f.at("crash_test").signal, SIGSEGV);
  EXPECT_EQ(status("hang_test"), "timeout");
  EXPECT_EQ(f.at("pass_test").parsed_from, "junit");
  EXPECT_EQ(f.at("crash_test").parsed_from, "log");
  EXPECT_EQ(f.at("pass_test").log_path, "logs/pass_test.log");
  EXPECT_TRUE(fs::exists(out() / "logs/pass_test.xml"));
  EXPECT_FALSE(fs::exists(out() / "logs/crash_test.xml"));

  auto c = cases(run);
  // Statuses and GoogleTest's own source lines, relative to the project root.
  EXPECT_EQ(c.at("pass_test.Basic.Passes").test.status, CaseStatus::kPassed);
  EXPECT_EQ(c.at("pass_test.Basic.Passes").test.source.path, "src/pass_test.cpp");
  const TestCase& fails = c.at("pass_test.Basic.Fails").test;
  EXPECT_EQ(fails.status, CaseStatus::kFailed);
  EXPECT_EQ(fails.source.path, "src/pass_test.cpp");
  EXPECT_EQ(fails.source.line, line_of("pass_test.cpp", "e2e: failing line"));
  EXPECT_EQ(fails.message, "Expected equality of these values: 2 + 2 Which is: 4 5");
  EXPECT_EQ(c.at("pass_test.Basic.Fails").signature.size(), 16U);
  EXPECT_EQ(c.at("pass_test.Basic.Skips").test.status, CaseStatus::kSkipped);
  EXPECT_EQ(c.at("pass_test.Basic.Skips").test.message, "nothing to do here");
  EXPECT_EQ(c.at("pass_test.Environment.ShimIsActivated").test.status, CaseStatus::kPassed);
  EXPECT_EQ(c.count("many_test.Many.DISABLED_E"), 0U) << "disabled tests are no cases";
  EXPECT_EQ(c.at("many_test.Values/Param.Small/4").test.status, CaseStatus::kFailed);
  EXPECT_EQ(c.at("many_test.Typed/2.Zero").test.status, CaseStatus::kPassed);

  // The crash: finished tests keep their results, the running one is the culprit.
  EXPECT_EQ(c.at("crash_test.Crash.First").test.status, CaseStatus::kPassed);
  EXPECT_EQ(c.at("crash_test.Crash.Second").test.status, CaseStatus::kFailed);
  EXPECT_EQ(c.at("crash_test.Crash.Second").test.source.line,
            line_of("crash_test.cpp", "TEST(Crash, Second)"));
  const TestCase& third = c.at("crash_test.Crash.Third").test;
  EXPECT_EQ(third.status, CaseStatus::kError);
  EXPECT_EQ(third.culprit, "crashed");
  EXPECT_EQ(third.message, "process killed by SIGSEGV");
  EXPECT_NE(third.traceback.find("about to crash"), std::string::npos);
  EXPECT_EQ(c.count("crash_test.Crash.Fourth"), 0U) << "not continued: --continue-after-crash 0";

  // The hang: killed at the timeout, the running test is the culprit.
  EXPECT_EQ(c.at("hang_test.Hang.First").test.status, CaseStatus::kPassed);
  EXPECT_EQ(c.at("hang_test.Hang.Forever").test.culprit, "timeout");
  EXPECT_GE(f.at("hang_test").duration_s, 3.0);
  EXPECT_LT(f.at("hang_test").duration_s, 3.0 + 1.0 + 2.0);

  // The counts GoogleTest printed are stored with the file.
  EXPECT_TRUE(f.at("pass_test").reported.present);
  EXPECT_EQ(f.at("pass_test").reported.ran, 4);
  EXPECT_EQ(f.at("pass_test").reported.failed, 1);
}

// --continue-after-crash (on by default): the crashed binary runs again with the tests it
// reported left out by --gtest_filter's negative patterns, so the test after the crash runs.
TEST_F(GtestE2E, ACrashedBinaryGoesOnWithoutTheTestsItReported) {
  auto r = run_runner(kSuite, {"crash_test"});
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("runner: continuing 1 file cut short"), std::string::npos) << r.output;
  const std::int64_t run = last_run();
  const FileRecord f = files(run).at("crash_test");
  EXPECT_EQ(f.status, FileStatus::kCrashed) << "a test did crash it";
  EXPECT_NE(
      f.note.find("continued: 1 more test ran in 1 more process (continued/1/crash_test.log)"),
      std::string::npos)
      << f.note;
  auto c = cases(run);
  ASSERT_EQ(c.size(), 4U);
  EXPECT_EQ(c.at("crash_test.Crash.First").test.status, CaseStatus::kPassed);
  EXPECT_EQ(c.at("crash_test.Crash.Second").test.status, CaseStatus::kFailed);
  EXPECT_EQ(c.at("crash_test.Crash.Third").test.culprit, "crashed");
  EXPECT_EQ(c.at("crash_test.Crash.Fourth").test.status, CaseStatus::kPassed);

  // GoogleTest says which filter it ran under: the three reported tests left out.
  const std::string log = testing::read_file(out() / "continued/1/crash_test.log");
  const std::size_t note = log.find("Note: Google Test filter = *-");
  ASSERT_NE(note, std::string::npos) << log;
  const std::string filter = log.substr(note, log.find('\n', note) - note);
  for (const char* name : {"Crash.First", "Crash.Second", "Crash.Third"}) {
    EXPECT_NE(filter.find(name), std::string::npos) << filter;
  }
  EXPECT_EQ(filter.find("Crash.Fourth"), std::string::npos) << filter;
}

TEST_F(GtestE2E, ShardsGiveTheSameResultsAsOneProcessPerBinary) {
  using Result = std::tuple<std::string, std::string, std::string>;
  auto results = [&](std::int64_t run) {
    std::set<Result> out;
    for (const auto& c : Store(db()).cases(run)) {
      out.emplace(c.test.classname, c.test.name, std::string(to_string(c.test.status)));
    }
    return out;
  };
  auto r = run_runner(kSuite, {"many_test", "pass_test"});
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const std::set<Result> whole = results(last_run());
  EXPECT_EQ(whole.size(), 4U + 6U + 5U + 3U);  // pass_test; many_test: plain, params, typed

  // The same suite with "gtest_shards": 3, read from another folder.
  std::ifstream in(kSuite / "suite.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.insert(text.rfind('}'), ", \"gtest_shards\": 3\n");
  testing::write_file(dir_ / "sharded/suite.json", text);
  r = run_runner(dir_ / "sharded", {"many_test", "pass_test", "-j", "3"});
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const std::int64_t run = last_run();
  EXPECT_EQ(results(run), whole);
  auto f = files(run);
  ASSERT_EQ(f.size(), 6U) << r.output;
  for (const char* name : {"many_test", "pass_test"}) {
    for (int i = 1; i <= 3; ++i) {
      const std::string path = fmt::format("{} [shard {} of 3]", name, i);
      ASSERT_EQ(f.count(path), 1U) << path;
      EXPECT_EQ(f.at(path).log_path, fmt::format("logs/{}.shard-{}-of-3.log", name, i));
      EXPECT_TRUE(fs::exists(out() / fmt::format("logs/{}.shard-{}-of-3.xml", name, i)));
      EXPECT_NE(testing::read_file(out() / f.at(path).log_path)
                    .find(fmt::format("Note: This is test shard {} of 3.", i)),
                std::string::npos)
          << path;
    }
  }
  auto list = testing::run({RUNNER_PATH, (dir_ / "sharded").string(), "many_test", "--list"},
                           {{"E2E_GTEST_ROOT", kRoot.string()}});
  EXPECT_EQ(list.output,
            "many_test [shard 1 of 3]\nmany_test [shard 2 of 3]\nmany_test [shard 3 of 3]\n");
}

// Issue 34: the ids the runner prints are GoogleTest's own (--gtest_list_tests), a failing
// test's command runs it alone, and -k keeps the tests whose name holds it.
TEST_F(GtestE2E, IdsAreGoogleTestsNamesAndSelectTheirTests) {
  auto list = testing::run({(kRoot / "bin" / "many_test").string(), "--gtest_list_tests"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  std::set<std::string> names;  // "Suite.Test", as --gtest_filter takes them
  std::string suite;
  std::istringstream lines(list.output);
  for (std::string line; std::getline(lines, line);) {
    line = line.substr(0, line.find("  #"));
    if (line.rfind("  ", 0) == 0) {
      names.insert(suite + line.substr(2));
    } else if (!line.empty() && line.back() == '.') {
      suite = line;
    }
  }
  ASSERT_GT(names.size(), 10U) << list.output;

  ASSERT_EQ(run_runner(kSuite, {"many_test"}).exit_code, 1);
  auto shown = testing::run({RUNNER_PATH, "show", "--json", "--all", "--db", db().string()});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  std::vector<std::string> commands;
  const nlohmann::json run = nlohmann::json::parse(shown.output);
  for (const auto& f : run.at("files")) {
    for (const auto& t : f.at("tests")) {
      EXPECT_EQ(names.count(t.at("id").get<std::string>()), 1U) << t.at("id");
      if (t.at("status") == "failed") commands.push_back(t.at("rerun").get<std::string>());
    }
  }
  ASSERT_EQ(commands.size(), 3U) << "Many.C, Values/Param.Small/3 and /4";
  for (const std::string& command : commands) {
    auto again = testing::run({"/bin/sh", "-c", command + " --out " + (dir_ / "again").string()},
                              {{"E2E_GTEST_ROOT", kRoot.string()}, {"NO_COLOR", "1"}}, 100s);
    EXPECT_EQ(again.exit_code, 1) << command << "\n" << again.output;
    EXPECT_EQ(cases(last_run()).size(), 1U) << command;
    fs::remove_all(dir_ / "again");
  }
  ASSERT_EQ(run_runner(kSuite, {"many_test", "-k", "Typed"}).exit_code, 0);
  std::set<std::string> typed;
  for (const auto& [name, c] : cases(last_run()))
    typed.insert(c.test.classname + "." + c.test.name);
  EXPECT_EQ(typed, (std::set<std::string>{"many_test.Typed/0.Zero", "many_test.Typed/1.Zero",
                                          "many_test.Typed/2.Zero"}));
}

TEST_F(GtestE2E, AGtestSuiteNeedsNoPython) {
  auto r = testing::run({RUNNER_PATH, kSuite.string(), "pass_test", "--db", db().string(), "--out",
                         out().string(), "--python", "/nonexistent/python3"},
                        {{"E2E_GTEST_ROOT", kRoot.string()}, {"NO_COLOR", "1"}}, 100s);
  ASSERT_EQ(r.exit_code, 1) << r.output;  // pass_test holds failing tests: it ran
  auto run = Store(db()).run(last_run());
  ASSERT_TRUE(run);
  auto env = nlohmann::json::parse(run->environment);
  EXPECT_TRUE(env["python"].is_null()) << run->environment;
  EXPECT_TRUE(env.contains("device_probe"));
}

}  // namespace
}  // namespace devshim
