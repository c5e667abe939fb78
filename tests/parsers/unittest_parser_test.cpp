// The unittest parser on logs captured from real `python3.11 -m unittest -v` runs
// (tests/parsers/unittest_samples; paths rewritten to /work/proj) and on adversarial text.
#include "parsers/unittest_parser.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/support/test_support.h"

namespace devshim {
namespace {

const std::filesystem::path kSamples = UNITTEST_SAMPLES_DIR;

ParsedFile parse_sample(const std::string& name, const std::string& test_file) {
  LineReader lines(kSamples / name);
  return parse_unittest_log(lines, test_file);
}

ParsedFile parse_text(const std::string& text) {
  LineReader lines = LineReader::from_string(text);
  return parse_unittest_log(lines, "tests/test_x.py");
}

std::map<std::string, const TestCase*> by_name(const ParsedFile& f) {
  std::map<std::string, const TestCase*> m;
  for (const auto& c : f.cases) m[c.classname + "::" + c.name] = &c;
  return m;
}

TEST(UnittestParser, EveryOutcomeOfARealRun) {
  ParsedFile f = parse_sample("mixed_outcomes.log", "tests/test_x.py");
  auto m = by_name(f);
  ASSERT_EQ(f.cases.size(), 11U);
  EXPECT_EQ(m.at("tests.test_x.A::test_ok")->status, CaseStatus::kPassed);
  EXPECT_EQ(m.at("tests.test_x.A::test_print")->status, CaseStatus::kPassed);
  EXPECT_EQ(m.at("tests.test_x.A::test_skip")->status, CaseStatus::kSkipped);
  EXPECT_EQ(m.at("tests.test_x.A::test_skip")->message, "because");
  EXPECT_EQ(m.at("tests.test_x.A::test_xf")->status, CaseStatus::kXfailed);
  EXPECT_EQ(m.at("tests.test_x.A::test_xp")->status, CaseStatus::kXpassed);
  const TestCase* doc = m.at("tests.test_x.A::test_doc");
  EXPECT_EQ(doc->status, CaseStatus::kFailed);
  EXPECT_EQ(doc->exception, "AssertionError");
  EXPECT_EQ(doc->message, "1 != 2");
  EXPECT_EQ(doc->source.path, "tests/test_x.py");
  EXPECT_EQ(doc->source.line, 12);
  EXPECT_NE(doc->traceback.find("self.assertEqual(1, 2)"), std::string::npos);
  EXPECT_EQ(m.at("tests.test_x.A::test_err")->exception, "KeyError");
  EXPECT_EQ(m.at("tests.test_x.A::test_sub (i=1)")->status, CaseStatus::kFailed);
  EXPECT_EQ(m.at("tests.test_x.A::test_sub (i=2)")->message, "2 not less than 1");
  EXPECT_EQ(m.count("tests.test_x.A::test_sub"), 0U) << "the parent counts through its subtests";
  EXPECT_EQ(m.at("tests.test_x.B::setUpClass")->status, CaseStatus::kError);
  EXPECT_EQ(m.at("tests.test_x.B::setUpClass")->message, "boom in setUpClass");
  EXPECT_EQ(m.at("tests.test_x::tearDownModule")->exception, "OSError");
  EXPECT_FALSE(f.import_error);
  EXPECT_FALSE(f.unfinished);
  // The framework's own counts agree with the cases.
  ASSERT_TRUE(f.reported.present);
  EXPECT_EQ(f.reported.ran, 8);
  EXPECT_EQ(f.reported.failed, 3);
  EXPECT_EQ(f.reported.errors, 3);
  EXPECT_EQ(f.reported.skipped, 1);
  EXPECT_EQ(f.reported.xfailed, 1);
  EXPECT_EQ(f.reported.xpassed, 1);
  std::map<CaseStatus, int> counts;
  for (const auto& c : f.cases) ++counts[c.status];
  EXPECT_EQ(counts[CaseStatus::kFailed], f.reported.failed);
  EXPECT_EQ(counts[CaseStatus::kError], f.reported.errors);
}

TEST(UnittestParser, ImportFailureIsAnImportError) {
  ParsedFile f = parse_sample("import_error.log", "tests/test_imp.py");
  EXPECT_TRUE(f.import_error);
  ASSERT_EQ(f.cases.size(), 1U);
  EXPECT_EQ(f.cases[0].exception, "ModuleNotFoundError");
  EXPECT_EQ(f.cases[0].message, "No module named 'nonexistent_mod'");
  EXPECT_EQ(f.cases[0].source.line, 1);
  EXPECT_NE(f.import_error_text.find("Failed to import test module"), std::string::npos);
}

TEST(UnittestParser, ACrashLeavesTheFinishedTestsAndNamesTheCulprit) {
  ParsedFile f = parse_sample("crash.log", "tests/test_crash.py");
  ASSERT_EQ(f.cases.size(), 1U);
  EXPECT_EQ(f.cases[0].name, "test_a_ok");
  ASSERT_TRUE(f.unfinished);
  EXPECT_EQ(f.unfinished->name, "test_b_crash");
  EXPECT_EQ(f.unfinished->classname, "tests.test_crash.C");
  EXPECT_EQ(f.unfinished->exception, "Fatal Python error");
  EXPECT_EQ(f.unfinished->message, "Segmentation fault");
  EXPECT_EQ(f.unfinished->source.line, 7);
  EXPECT_FALSE(f.reported.present);
}

TEST(UnittestParser, OlderFormatAndOutputBetweenNameAndVerdict) {
  ParsedFile f = parse_text(
      "test_a (pkg.mod.Klass) ... ok\n"
      "test_b (pkg.mod.Klass) ... some output\n"
      "more output ... with dots\n"
      "FAIL\n"
      "test_c (pkg.mod.Klass) ... partial outputok\n"
      "test_d (pkg.mod.Klass) ... skipped 'needs ... cuda'\n"
      "\n"
      "----------------------------------------------------------------------\n"
      "Ran 4 tests in 0.001s\n\nOK (skipped=1)\n");
  auto m = by_name(f);
  EXPECT_EQ(m.at("pkg.mod.Klass::test_a")->status, CaseStatus::kPassed);
  EXPECT_EQ(m.at("pkg.mod.Klass::test_b")->status, CaseStatus::kFailed);
  EXPECT_EQ(m.at("pkg.mod.Klass::test_c")->status, CaseStatus::kPassed);
  EXPECT_EQ(m.at("pkg.mod.Klass::test_d")->message, "needs ... cuda");
  EXPECT_EQ(f.reported.ran, 4);
  EXPECT_EQ(f.reported.skipped, 1);
  EXPECT_EQ(f.reported.passed, 2);  // passing cases: test_a, test_c
}

// A real Python 3.11 log of a file named with spaces, quotes and non-ASCII letters: its module
// name holds all of them, and so do the test ids and the traceback's path.
TEST(UnittestParser, ModulesNamedWithSpacesQuotesAndUnicode) {
  const std::string file =
      "tests/test_odd name 'single' \"double\" \u00fcn\u00efc\u00f8d\u00e9 \u2713.py";
  LineReader lines = LineReader::from_string(
      "test_fails (tests.test_odd name 'single' \"double\" \u00fcn\u00efc\u00f8d\u00e9 "
      "\u2713.OddName.test_fails) ... FAIL\n"
      "test_passes (tests.test_odd name 'single' \"double\" \u00fcn\u00efc\u00f8d\u00e9 "
      "\u2713.OddName.test_passes) ... ok\n"
      "t\u00ebst_\u00fc (pkg.m\u00f6d.Kl\u00e4ss.t\u00ebst_\u00fc) ... ok\n"
      "\n"
      "======================================================================\n"
      "FAIL: test_fails (tests.test_odd name 'single' \"double\" \u00fcn\u00efc\u00f8d\u00e9 "
      "\u2713.OddName.test_fails)\n"
      "----------------------------------------------------------------------\n"
      "Traceback (most recent call last):\n"
      "  File \"/p/tests/test_odd name 'single' \"double\" \u00fcn\u00efc\u00f8d\u00e9 "
      "\u2713.py\", line 10, in test_fails\n"
      "    self.assertEqual(\"\u00fcn\u00efc\u00f8d\u00e9\", \"unicode\")\n"
      "AssertionError: '\u00fcn\u00efc\u00f8d\u00e9' != 'unicode'\n"
      "\n"
      "----------------------------------------------------------------------\n"
      "Ran 3 tests in 0.001s\n\nFAILED (failures=1)\n");
  ParsedFile f = parse_unittest_log(lines, file);
  const std::string klass =
      "tests.test_odd name 'single' \"double\" \u00fcn\u00efc\u00f8d\u00e9 \u2713.OddName";
  auto m = by_name(f);
  ASSERT_EQ(m.size(), 3U);
  EXPECT_EQ(m.at(klass + "::test_passes")->status, CaseStatus::kPassed);
  const TestCase* failed = m.at(klass + "::test_fails");
  EXPECT_EQ(failed->status, CaseStatus::kFailed);
  EXPECT_EQ(failed->exception, "AssertionError");
  EXPECT_EQ(failed->source.line, 10);
  EXPECT_EQ(failed->source.path, file);
  EXPECT_EQ(m.at("pkg.m\u00f6d.Kl\u00e4ss::t\u00ebst_\u00fc")->status, CaseStatus::kPassed);
  EXPECT_EQ(f.reported.ran, 3);
}

// Output that merely looks like a description stays output.
TEST(UnittestParser, ParenthesesInOutputAreNotTests) {
  ParsedFile f = parse_text(
      "test_a (pkg.mod.Klass.test_a) ... note (see the docs.)\n"
      "Note (see docs.) ... ok\n"
      "ok\n"
      "\n"
      "----------------------------------------------------------------------\n"
      "Ran 1 test in 0.001s\n\nOK\n");
  auto m = by_name(f);
  ASSERT_EQ(m.size(), 1U);
  EXPECT_EQ(m.at("pkg.mod.Klass::test_a")->status, CaseStatus::kPassed);
}

TEST(UnittestParser, GarbageNeverCrashesIt) {
  for (const char* text :
       {"", "=====\n", "======================================================================\n",
        "test_x (\n", "test_x () ... \n", "ERROR: \n-----\n", "Ran x tests\nFAILED (failures=\n",
        "  test_x (a.b) (i=1) ... FAIL\n"}) {
    EXPECT_NO_THROW(parse_text(text)) << text;
  }
}

}  // namespace
}  // namespace devshim
