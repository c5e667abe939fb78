// Issue 34 end to end: the ids the runner prints are the frameworks' own, and they select tests.
// The real runner on tests/e2e/suites/ids (pytest and unittest names of every shape). The truth
// comes from the frameworks themselves: pytest's --collect-only, unittest's TestCase.id(). Each
// printed id is what the framework accepts, each copy-paste command re-runs exactly its test,
// and FILE::TEST and -k targets run what they name.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kIds = fs::path(E2E_SUITES_DIR) / "ids";

std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from < text.size()) {
    std::size_t end = text.find('\n', from);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(from, end - from);
    if (line.find(needle) != std::string::npos) out.push_back(line);
    from = end + 1;
  }
  return out;
}

class IdsE2E : public ::testing::Test {
 protected:
  fs::path db() const { return dir_.path() / "results.db"; }
  std::map<std::string, std::string> env() const {
    return {{"NO_COLOR", "1"}, {"DEVSHIM_OUT", (dir_.path() / "out").string()}};
  }
  testing::RunResult runner(const std::vector<std::string>& args) {
    std::vector<std::string> argv{RUNNER_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--db", db().string()});
    return testing::run(argv, env(), 200s);
  }
  testing::RunResult run_suite(const std::string& suite_file,
                               const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{(kIds / suite_file).string(), "--python", SUITE_PYTHON, "-j",
                                  "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return runner(args);
  }
  // `runner show RUN --json`: every test of the run, its file's path added.
  std::vector<json> shown_tests(const std::string& run) {
    auto r = runner({"show", run, "--json", "--all"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<json> tests;
    const json shown = json::parse(r.output);
    for (const json& f : shown.at("files")) {
      for (json t : f.at("tests")) {
        t["file"] = f.at("path");
        tests.push_back(std::move(t));
      }
    }
    return tests;
  }
  // Runs a copy-paste command as a person would: in a POSIX shell.
  testing::RunResult shell(const std::string& command) {
    return testing::run({"/bin/sh", "-c", command}, env(), 200s);
  }
  std::vector<std::string> names_of_latest_run() {
    Store store(db());
    std::vector<std::string> names;
    for (const auto& c : store.cases(store.runs(1).at(0).id)) names.push_back(c.test.name);
    std::sort(names.begin(), names.end());
    return names;
  }
  TempDir dir_;
};

TEST_F(IdsE2E, PytestIdsArePytestsNodeIdsAndEachCommandRerunsItsTest) {
  // What pytest itself calls the tests (its rootdir: the suite's project root).
  auto collect =
      testing::run({SUITE_PYTHON, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                    "--rootdir", kIds.string(), (kIds / "tests" / "test_nodes.py").string()},
                   {}, 120s);
  ASSERT_EQ(collect.exit_code, 0) << collect.output;
  std::vector<std::string> pytest_ids = lines_with(collect.output, "::");
  std::sort(pytest_ids.begin(), pytest_ids.end());
  ASSERT_EQ(pytest_ids.size(), 8U) << collect.output;

  const fs::path first = dir_.path() / "first";
  auto r = run_suite("pytest.json", {"--out", first.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  std::vector<std::string> ids;
  std::vector<json> failing;
  for (const json& t : shown_tests("latest")) {
    ids.push_back(t.at("id").get<std::string>());
    if (t.at("status") == "failed") failing.push_back(t);
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, pytest_ids);
  ASSERT_EQ(failing.size(), 6U);

  // pytest accepts each printed id as it is.
  for (const std::string& id : {std::string("tests/test_nodes.py::test_param_fails[a b]"),
                                std::string("tests/test_nodes.py::TestOuter::TestInner::"
                                            "test_nested_fails")}) {
    ASSERT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
    auto one = testing::run({SUITE_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "--rootdir", kIds.string(), (kIds / id).string()},
                            {}, 120s);
    EXPECT_NE(one.output.find("1 failed"), std::string::npos) << id << "\n" << one.output;
  }

  // Every failing test's command re-runs that test alone, quotes and brackets included.
  for (const json& t : failing) {
    const std::string command = t.at("rerun").get<std::string>();
    auto again = shell(command);
    EXPECT_EQ(again.exit_code, 1) << command << "\n" << again.output;
    EXPECT_EQ(names_of_latest_run(), std::vector<std::string>{t.at("name").get<std::string>()})
        << command;
  }
  // The reports print the same ids and commands.
  const std::string md = testing::read_file(first / "report.md");
  EXPECT_NE(md.find("tests/test\\_nodes.py::TestOuter::TestInner::test\\_nested\\_fails"),
            std::string::npos)
      << md;
  const std::string html = testing::read_file(first / "report.html");
  for (const json& t : failing) {
    EXPECT_NE(md.find(t.at("rerun").get<std::string>() + "\n"), std::string::npos)
        << t.at("rerun") << "\n"
        << md;
  }
  EXPECT_NE(html.find("<details class=\"rerun\">"), std::string::npos);
}

TEST_F(IdsE2E, UnittestIdsAreTestCaseIdsAndSubtestsRerunTheirTest) {
  // What unittest itself calls them: TestCase.id(), a subtest's _SubTest.id().
  const std::string list =
      "import sys, unittest\n"
      "sys.path.insert(0, sys.argv[1])\n"
      "class R(unittest.TestResult):\n"
      "    def addSuccess(self, t): print('ID', t.id())\n"
      "    def addFailure(self, t, e): print('ID', t.id())\n"
      "    def addSubTest(self, t, s, e):\n"
      "        if e: print('ID', s.id())\n"
      "unittest.defaultTestLoader.loadTestsFromName('tests.test_cases').run(R())\n";
  auto truth = testing::run({SUITE_PYTHON, "-c", list, kIds.string()}, {}, 120s);
  ASSERT_EQ(truth.exit_code, 0) << truth.output;
  std::vector<std::string> unittest_ids;
  for (const std::string& line : lines_with(truth.output, "ID ")) {
    unittest_ids.push_back(line.substr(3));
  }
  std::sort(unittest_ids.begin(), unittest_ids.end());

  auto r = run_suite("unittest.json");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  std::vector<std::string> ids;
  std::string subtest_command;
  for (const json& t : shown_tests("latest")) {
    ids.push_back(t.at("id").get<std::string>());
    if (t.at("name") == "test_subtests_fails (i=1)") subtest_command = t.at("rerun");
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, unittest_ids);

  // A subtest cannot run alone: its command runs its test, and the subtest fails again.
  ASSERT_FALSE(subtest_command.empty());
  auto again = shell(subtest_command);
  EXPECT_EQ(again.exit_code, 1) << subtest_command << "\n" << again.output;
  EXPECT_EQ(names_of_latest_run(), std::vector<std::string>{"test_subtests_fails (i=1)"});
}

TEST_F(IdsE2E, TestTargetsAndKeywordsRunWhatTheyNameAndNothingMatchedFails) {
  // FILE::TEST, the file relative to the tests folder or the project root, twice is once.
  auto r = run_suite("pytest.json", {"test_nodes.py::TestOuter::test_method_passes",
                                     "tests/test_nodes.py::TestOuter::test_method_passes",
                                     "test_nodes.py::test_skipped"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(names_of_latest_run(),
            (std::vector<std::string>{"test_method_passes", "test_skipped"}));
  // pytest's -k.
  r = run_suite("pytest.json", {"-k", "param and not x"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(names_of_latest_run(),
            (std::vector<std::string>{"test_param_fails[1.5]", "test_param_fails[a b]",
                                      "test_param_fails[it's]"}));
  // unittest's names, "::" or '.' between class and test; and unittest's own -k.
  r = run_suite("unittest.json", {"test_cases.py::Cases::test_passes"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(names_of_latest_run(), std::vector<std::string>{"test_passes"});
  r = run_suite("unittest.json", {"-k", "subtests"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(names_of_latest_run(), (std::vector<std::string>{"test_subtests_fails (i=1)"}));

  // Naming nothing that exists never passes.
  r = run_suite("pytest.json", {"-k", "no_such_test"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no test matched"), std::string::npos) << r.output;
  // A test target needs a file.
  r = run_suite("pytest.json", {"tests::test_x"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is no file of the tests folder"), std::string::npos) << r.output;
}

TEST_F(IdsE2E, HistoryFindsATestByItsNodeId) {
  ASSERT_EQ(run_suite("pytest.json").exit_code, 1);
  auto r = runner({"history", "tests/test_nodes.py::TestOuter::TestInner::test_nested_fails"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("history of tests/test_nodes.py::TestOuter::TestInner::"
                          "test_nested_fails: 1 run"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace devshim
