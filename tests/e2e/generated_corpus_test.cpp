// Accounting check on a generated corpus: many test files with known outcomes, run by the real
// runner under unittest and under pytest. Every test must come back with the status it was
// written to have, and every file's parsed counts must equal what the framework itself printed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr int kFiles = 12;
constexpr int kTestsPerFile = 14;

enum class Kind { kPass, kFail, kError, kSkip, kXfail, kXpass, kOutput, kSubtest };
constexpr int kKinds = 8;

Kind kind_of(int file, int test) { return static_cast<Kind>((file * 7 + test * 3) % kKinds); }

// Expected (case name → status) of one generated test.
void expect_unittest(Kind k, const std::string& name, std::map<std::string, std::string>& out) {
  switch (k) {
    case Kind::kPass:
    case Kind::kOutput:
      out[name] = "passed";
      break;
    case Kind::kFail:
      out[name] = "failed";
      break;
    case Kind::kError:
      out[name] = "error";
      break;
    case Kind::kSkip:
      out[name] = "skipped";
      break;
    case Kind::kXfail:
      out[name] = "xfailed";
      break;
    case Kind::kXpass:
      out[name] = "xpassed";
      break;
    case Kind::kSubtest:
      out[name + " (k=1)"] = "failed";
      break;
  }
}

std::string unittest_body(Kind k) {
  switch (k) {
    case Kind::kPass:
      return "        self.assertEqual(1, 1)\n";
    case Kind::kFail:
      return "        self.assertLessEqual(0.5, 1e-05)\n";
    case Kind::kError:
      return "        raise KeyError('missing')\n";
    case Kind::kSkip:
      return "        self.skipTest('needs a GPU')\n";
    case Kind::kXfail:
      return "        raise ValueError('known bug')\n";
    case Kind::kXpass:
      return "        pass\n";
    case Kind::kOutput:
      return "        print('some output ... ok')\n        print('FAIL')\n";
    case Kind::kSubtest:
      return "        for k in range(3):\n            with self.subTest(k=k):\n"
             "                self.assertNotEqual(k, 1)\n";
  }
  return "";
}

std::string pytest_test(Kind k, const std::string& name, std::map<std::string, std::string>& out) {
  switch (k) {
    case Kind::kPass:
    case Kind::kOutput:
      out[name] = "passed";
      return fmt::format("def {}():\n    print('out')\n    assert 1 == 1\n", name);
    case Kind::kFail:
      out[name] = "failed";
      return fmt::format("def {}():\n    assert 0.5 <= 1e-05\n", name);
    case Kind::kError:
      out[name] = "error";
      return fmt::format("def {}(broken_fixture):\n    pass\n", name);
    case Kind::kSkip:
      out[name] = "skipped";
      return fmt::format("def {}():\n    pytest.skip('needs a GPU')\n", name);
    case Kind::kXfail:
      out[name] = "xfailed";
      return fmt::format("@pytest.mark.xfail(reason='known')\ndef {}():\n    raise ValueError()\n",
                         name);
    case Kind::kXpass:
      out[name] = "xpassed";
      return fmt::format("@pytest.mark.xfail(reason='known')\ndef {}():\n    pass\n", name);
    case Kind::kSubtest:
      out[name + "[0]"] = "passed";
      out[name + "[1]"] = "failed";
      return fmt::format("@pytest.mark.parametrize('k', [0, 1])\ndef {}(k):\n    assert k != 1\n",
                         name);
  }
  return "";
}

class GeneratedCorpus : public ::testing::Test {
 protected:
  // Runs the suite at dir_/name and compares every file's cases with `expected`.
  void run_and_compare(const std::string& name,
                       const std::map<std::string, std::map<std::string, std::string>>& expected) {
    auto r = testing::run(
        {RUNNER_PATH, (dir_ / name).string(), "--db", (dir_ / "r.db").string(), "--out",
         (dir_ / ("out-" + name)).string(), "--python", SUITE_PYTHON, "-j", "2"},
        {}, 300s);
    ASSERT_EQ(r.exit_code, 1) << r.output;
    Store store(dir_ / "r.db");
    auto run = store.runs(1).at(0);
    std::map<std::string, std::map<std::string, std::string>> got;
    std::map<std::string, std::map<std::string, int>> counts;
    for (const auto& c : store.cases(run.id)) {
      got[c.file][c.test.name] = std::string(to_string(c.test.status));
      ++counts[c.file][std::string(to_string(c.test.status))];
    }
    EXPECT_EQ(got, expected);
    for (const auto& f : store.files(run.id)) {
      ASSERT_TRUE(f.status) << f.path;
      EXPECT_EQ(*f.status, FileStatus::kFailed) << f.path;
      EXPECT_FALSE(f.parsed_from.empty()) << f.path;
    }
    // The framework's own closing counts agree with the per-test results.
    for (const auto& f : store.files(run.id)) {
      auto& c = counts[f.path];
      ASSERT_TRUE(f.reported.present) << f.path;
      EXPECT_EQ(f.reported.failed, c["failed"]) << f.path;
      EXPECT_EQ(f.reported.errors, c["error"]) << f.path;
      EXPECT_EQ(f.reported.skipped, c["skipped"]) << f.path;
      EXPECT_EQ(f.reported.xfailed, c["xfailed"]) << f.path;
      EXPECT_EQ(f.reported.xpassed, c["xpassed"]) << f.path;
      EXPECT_EQ(f.reported.passed, c["passed"]) << f.path;
    }
  }
  TempDir dir_;
};

TEST_F(GeneratedCorpus, UnittestStatusesAndCountsMatchWhatUnittestReports) {
  std::map<std::string, std::map<std::string, std::string>> expected;
  write_file(dir_ / "ut/suite.json",
             R"({"name": "gen-unittest", "framework": "unittest", "timeout_s": 60})");
  for (int f = 0; f < kFiles; ++f) {
    const std::string rel = fmt::format("test_gen_{:02}.py", f);
    std::string py = "import unittest\n\n\nclass Generated(unittest.TestCase):\n";
    for (int t = 0; t < kTestsPerFile; ++t) {
      Kind k = kind_of(f, t);
      const std::string name = fmt::format("test_{:02}", t);
      if (k == Kind::kXfail || k == Kind::kXpass) py += "    @unittest.expectedFailure\n";
      py += fmt::format("    def {}(self):\n{}\n", name, unittest_body(k));
      expect_unittest(k, name, expected[rel]);
    }
    write_file(dir_ / "ut/tests" / rel, py);
  }
  run_and_compare("ut", expected);
}

TEST_F(GeneratedCorpus, PytestStatusesAndCountsMatchWhatPytestReports) {
  std::map<std::string, std::map<std::string, std::string>> expected;
  write_file(dir_ / "pt/suite.json",
             R"({"name": "gen-pytest", "framework": "pytest", "timeout_s": 60})");
  for (int f = 0; f < kFiles; ++f) {
    const std::string rel = fmt::format("test_gen_{:02}.py", f);
    std::string py =
        "import pytest\n\n\n@pytest.fixture\ndef broken_fixture():\n"
        "    raise RuntimeError('fixture failed')\n\n\n";
    for (int t = 0; t < kTestsPerFile; ++t) {
      py += pytest_test(kind_of(f, t), fmt::format("test_{:02}", t), expected[rel]) + "\n\n";
    }
    write_file(dir_ / "pt/tests" / rel, py);
  }
  run_and_compare("pt", expected);
}

}  // namespace
}  // namespace devshim
