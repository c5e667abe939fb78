// collect_results for GoogleTest binaries: against the real captured output of
// tests/parsers/fixtures/gtest (the file status must be the one the real run had, the test that
// was running when it died must be recorded), and on hand-made output for the rules that are
// GoogleTest's own (no meaning for exit 5, a binary that exits in the middle of a test, shards).
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runner/engine/collect.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;
using testing::write_file;

const fs::path kGtestFixtures = fs::path(PARSER_FIXTURES_DIR) / "gtest";

std::vector<std::string> fixtures() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(kGtestFixtures)) {
    const std::string name = entry.path().filename().string();
    if (fs::exists(entry.path() / (name + ".expected.json"))) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

ProcessResult exited(int code) {
  ProcessResult r;
  r.exit_code = code;
  return r;
}

class CollectGtestFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(CollectGtestFixture, FileStatusAndCulpritAreTheOnesOfTheRealRun) {
  const std::string name = GetParam();
  std::ifstream in(kGtestFixtures / name / (name + ".expected.json"));
  const json e = json::parse(in);
  Suite suite;
  suite.name = "fixtures";
  suite.project_root = e["source_root"].get<std::string>();
  suite.tests_dir = ".";
  suite.framework = Framework::kGtest;
  const std::string program = e["program"];
  TestFile file{program, suite.project_root / program};
  ProcessSpec spec;
  spec.log_path = kGtestFixtures / e["log"].get<std::string>();
  spec.junit_path = e["xml"].is_string() ? kGtestFixtures / e["xml"].get<std::string>()
                                         : kGtestFixtures / name / "none.xml";
  ProcessResult r;
  if (e["exit"]["code"].is_number()) r.exit_code = e["exit"]["code"].get<int>();
  if (e["exit"]["signal"].is_number()) r.signal = e["exit"]["signal"].get<int>();
  r.timed_out = e["exit"]["timed_out"].get<bool>();

  CollectedFile c = collect_results(suite, file, spec, r);
  EXPECT_EQ(to_string(c.status), e["file_status"].get<std::string>());
  EXPECT_EQ(c.parsed_from, e["xml"].is_string() ? "junit" : "log");
  // Every test GoogleTest finished keeps its result.
  for (const json& want : e["cases"]) {
    auto it = std::find_if(c.cases.begin(), c.cases.end(), [&](const TestCase& t) {
      return t.classname == want["classname"] && t.name == want["name"];
    });
    ASSERT_NE(it, c.cases.end()) << want["name"];
    EXPECT_EQ(to_string(it->status), want["status"].get<std::string>()) << want["name"];
  }
  if (e["unfinished"].is_object()) {
    auto it = std::find_if(c.cases.begin(), c.cases.end(), [&](const TestCase& t) {
      return t.classname == e["unfinished"]["classname"] && t.name == e["unfinished"]["name"];
    });
    ASSERT_NE(it, c.cases.end()) << "the test that was running is recorded";
    EXPECT_EQ(it->status, CaseStatus::kError);
    const std::string status = e["file_status"];
    if (status == "crashed" || status == "timeout") {
      EXPECT_EQ(it->culprit, status);
    } else {
      EXPECT_EQ(it->culprit, "");
      EXPECT_EQ(it->exception, "ProcessExited");
      EXPECT_EQ(it->message, "the process exited with code 3 during this test");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RealOutput, CollectGtestFixture, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

class CollectGtest : public ::testing::Test {
 protected:
  void SetUp() override {
    suite_.name = "g";
    suite_.project_root = dir_.path();
    suite_.tests_dir = "bin";
    suite_.framework = Framework::kGtest;
    spec_.log_path = dir_ / "out/x.log";
    spec_.junit_path = dir_ / "out/x.xml";
  }
  CollectedFile collect(const std::string& log, ProcessResult r, const TestFile& file) {
    write_file(spec_.log_path, log);
    return collect_results(suite_, file, spec_, r);
  }
  TempDir dir_;
  Suite suite_;
  ProcessSpec spec_;
  TestFile file_{"ops/math_test", ""};
};

constexpr const char* kOneTest =
    "[==========] Running 1 test from 1 test suite.\n"
    "[----------] 1 test from M\n"
    "[ RUN      ] M.A\n"
    "[       OK ] M.A (0 ms)\n"
    "[----------] 1 test from M (0 ms total)\n\n"
    "[==========] 1 test from 1 test suite ran. (0 ms total)\n"
    "[  PASSED  ] 1 test.\n";

TEST_F(CollectGtest, ClassnamesStartWithTheBinarysPathAlsoForAShard) {
  CollectedFile c = collect(kOneTest, exited(0), file_);
  EXPECT_EQ(c.status, FileStatus::kPassed);
  EXPECT_EQ(c.parsed_from, "log");
  ASSERT_EQ(c.cases.size(), 1U);
  EXPECT_EQ(c.cases[0].classname, "ops.math_test.M");

  TestFile shard{"ops/math_test" + gtest_shard_suffix(0, 2), "", 0, 2};
  c = collect(kOneTest, exited(0), shard);
  ASSERT_EQ(c.cases.size(), 1U);
  EXPECT_EQ(c.cases[0].classname, "ops.math_test.M");
}

TEST_F(CollectGtest, ExitCodesHaveNoMeaningBeyondZero) {
  EXPECT_EQ(collect(kOneTest, exited(5), file_).status, FileStatus::kFailed);
  // A binary that cannot start (missing shared library): no test ran.
  EXPECT_EQ(collect("math_test: error while loading shared libraries\n", exited(127), file_).status,
            FileStatus::kError);
  // No test in this binary, or in this shard.
  EXPECT_EQ(collect("[==========] Running 0 tests from 0 test suites.\n"
                    "[==========] 0 tests from 0 test suites ran. (0 ms total)\n"
                    "[  PASSED  ] 0 tests.\n",
                    exited(0), file_)
                .status,
            FileStatus::kNoTests);
}

TEST_F(CollectGtest, AKilledBinaryNamesItsCulpritAndKeepsFinishedTests) {
  const std::string log =
      "[==========] Running 2 tests from 1 test suite.\n"
      "[----------] 2 tests from M\n"
      "[ RUN      ] M.A\n[       OK ] M.A (0 ms)\n"
      "[ RUN      ] M.B\n";
  ProcessResult segv;
  segv.signal = SIGSEGV;
  CollectedFile c = collect(log, segv, file_);
  EXPECT_EQ(c.status, FileStatus::kCrashed);
  ASSERT_EQ(c.cases.size(), 2U);
  EXPECT_EQ(c.cases[0].status, CaseStatus::kPassed);
  EXPECT_EQ(c.cases[1].name, "B");
  EXPECT_EQ(c.cases[1].culprit, "crashed");
  EXPECT_EQ(c.cases[1].exception, "ProcessKilled");
  EXPECT_EQ(c.cases[1].message, "process killed by SIGSEGV");

  ProcessResult timeout;
  timeout.signal = SIGKILL;
  timeout.timed_out = true;
  timeout.duration_s = 5;
  c = collect(log, timeout, file_);
  EXPECT_EQ(c.status, FileStatus::kTimeout);
  ASSERT_EQ(c.cases.size(), 2U);
  EXPECT_EQ(c.cases[1].culprit, "timeout");
  EXPECT_EQ(c.cases[1].exception, "Timeout");
}

TEST_F(CollectGtest, AnXmlWrittenBeforeACrashAtExitIsUsed) {
  write_file(spec_.junit_path, R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" disabled="0" errors="0" name="AllTests">
  <testsuite name="M" tests="1" failures="0" disabled="0" skipped="0" errors="0">
    <testcase name="A" file="/elsewhere/m.cpp" line="3" status="run" result="completed" time="0" classname="M" />
  </testsuite>
</testsuites>)");
  ProcessResult segv;
  segv.signal = SIGSEGV;
  CollectedFile c = collect(kOneTest, segv, file_);
  EXPECT_EQ(c.status, FileStatus::kCrashed);
  EXPECT_EQ(c.parsed_from, "junit");
  ASSERT_EQ(c.cases.size(), 1U);
  EXPECT_EQ(c.cases[0].source.path, "/elsewhere/m.cpp");
  EXPECT_EQ(c.cases[0].culprit, "");
}

}  // namespace
}  // namespace devshim
