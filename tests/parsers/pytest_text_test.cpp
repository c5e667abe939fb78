// Tests of the pytest text parser on real pytest 9.2 output (tests/parsers/pytest_samples/, made
// by capture.py there) and on adversarial text.
#include "parsers/pytest_text.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace devshim {
namespace {

namespace fs = std::filesystem;

const fs::path kSamples = PARSER_SAMPLES_DIR;

std::string read_sample(const std::string& name) {
  std::ifstream in(kSamples / name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ParsedFile parse_string(std::string text) {
  LineReader lines = LineReader::from_string(std::move(text));
  return parse_pytest_text(lines);
}

ParsedFile parse_sample(const std::string& name) {
  LineReader lines(kSamples / name);
  return parse_pytest_text(lines);
}

const TestCase* find(const ParsedFile& p, std::string_view classname, std::string_view name) {
  for (const auto& c : p.cases) {
    if (c.classname == classname && c.name == name) return &c;
  }
  return nullptr;
}

int count(const ParsedFile& p, CaseStatus s) {
  int n = 0;
  for (const auto& c : p.cases) n += c.status == s ? 1 : 0;
  return n;
}

constexpr std::string_view kMod = "tests.test_outcomes";

TEST(PytestNodeId, SplitsLikeJunitXml) {
  PytestName n = split_pytest_nodeid("tests/test_x.py::TestC::test_y[a-1]");
  EXPECT_EQ(n.file, "tests/test_x.py");
  EXPECT_EQ(n.classname, "tests.test_x.TestC");
  EXPECT_EQ(n.name, "test_y[a-1]");

  n = split_pytest_nodeid("tests/test_x.py::test_y[a::b]");
  EXPECT_EQ(n.classname, "tests.test_x");
  EXPECT_EQ(n.name, "test_y[a::b]");

  n = split_pytest_nodeid("tests/sub/test_x.py::A::B::test_z");
  EXPECT_EQ(n.classname, "tests.sub.test_x.A.B");
  EXPECT_EQ(n.name, "test_z");

  n = split_pytest_nodeid("tests/test_x.py::test_p[sp ace-[x]]");
  EXPECT_EQ(n.name, "test_p[sp ace-[x]]");

  n = split_pytest_nodeid("tests/test_x.py");  // a module: collection error / module skip
  EXPECT_EQ(n.file, "tests/test_x.py");
  EXPECT_EQ(n.classname, "");
  EXPECT_EQ(n.name, "tests.test_x");

  n = split_pytest_nodeid("test_top.py::test_a");
  EXPECT_EQ(n.classname, "test_top");
  EXPECT_EQ(n.name, "test_a");
}

TEST(PytestFailureSummary, LongFormat) {
  const char* text =
      "    def test_fail_deep():\n"
      ">       helper(3)\n"
      "\n"
      "tests/test_x.py:19: \n"
      "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n"
      "\n"
      "    def helper(v):\n"
      ">       raise pkg.errors.BadValue(f\"bad value {v}\")\n"
      "E       pkg.errors.BadValue: bad value 3\n"
      "E       second line\n"
      "\n"
      "pkg/errors.py:15: BadValue\n";
  PytestFailure f = summarize_pytest_failure(text, "tests/test_x.py");
  EXPECT_EQ(f.exception, "pkg.errors.BadValue");
  EXPECT_EQ(f.message, "bad value 3");
  ASSERT_TRUE(f.location);
  EXPECT_EQ(f.location->path, "tests/test_x.py");
  EXPECT_EQ(f.location->line, 19);  // the deepest frame in the test file, not pkg/errors.py

  f = summarize_pytest_failure(
      ">       assert 1 == 2\nE       assert 1 == 2\n\nt/x.py:3: AssertionError", "/abs/t/x.py");
  EXPECT_EQ(f.exception, "AssertionError");
  EXPECT_EQ(f.message, "assert 1 == 2");
  ASSERT_TRUE(f.location);
  EXPECT_EQ(f.location->line, 3);

  f = summarize_pytest_failure("[XPASS(strict)] strictly broken", "t/x.py");
  EXPECT_EQ(f.exception, "");
  EXPECT_EQ(f.message, "[XPASS(strict)] strictly broken");
  EXPECT_FALSE(f.location);

  EXPECT_EQ(summarize_pytest_failure("", "t/x.py").message, "");
}

TEST(PytestFailureSummary, SyntaxErrorAtCollection) {
  const char* text =
      "/usr/lib/python3.11/ast.py:50: in parse\n"
      "    return compile(source, filename, mode, flags,\n"
      "E     File \"/p/tests/test_s.py\", line 1\n"
      "E       def f(:\n"
      "E             ^\n"
      "E   SyntaxError: invalid syntax\n";
  PytestFailure f = summarize_pytest_failure(text, "tests/test_s.py");
  EXPECT_EQ(f.exception, "SyntaxError");
  EXPECT_EQ(f.message, "invalid syntax");
}

TEST(PytestTracebackText, CapsHugeTracebacksKeepingHeadAndTail) {
  std::string text = "\n\nfirst line\n";
  for (int i = 0; i < 20000; ++i)
    text += "E         line " + std::to_string(i) + " of a long diff\n";
  text += "\ntests/x.py:3: AssertionError\n\n";
  std::string kept = pytest_traceback_text(text);
  EXPECT_LT(kept.size(), 70u * 1024);
  EXPECT_EQ(kept.rfind("first line", 0), 0u);
  EXPECT_NE(kept.find("lines cut ...]"), std::string::npos);
  EXPECT_TRUE(kept.ends_with("tests/x.py:3: AssertionError"));
}

// The runner's command line on a module with every outcome.
// A conftest.py that fails to import stops pytest before its session (exit code 4): ignite's
// under the shim of issue 32 (tests/parsers/fixtures/gaps/issue32/README.md). The log is all
// there is: it is the file's collection error.
TEST(PytestText, AConftestThatFailsToImportIsTheFilesCollectionError) {
  LineReader lines(fs::path(PARSER_FIXTURES_DIR) / "gaps" / "issue32" /
                   "ignite-oldshim-conftest-import-error.log");
  const ParsedFile p = parse_pytest_text(lines);
  EXPECT_TRUE(p.cases.empty());
  EXPECT_TRUE(p.import_error);
  EXPECT_EQ(p.import_error_text.rfind("ImportError while loading conftest '", 0), 0U)
      << p.import_error_text;
  const PytestFailure f = summarize_pytest_failure(p.import_error_text, "tests/ignite/x.py");
  EXPECT_EQ(f.exception, "TypeError");
  EXPECT_EQ(f.message,
            "module, class, method, function, traceback, frame, or code object was expected, got "
            "builtin_function_or_method");
}

TEST(PytestText, EveryOutcome) {
  ParsedFile p = parse_sample("outcomes.log");
  EXPECT_FALSE(p.import_error);
  EXPECT_FALSE(p.unfinished);
  ASSERT_EQ(p.cases.size(), 33u);
  EXPECT_EQ(count(p, CaseStatus::kPassed), 14);
  EXPECT_EQ(count(p, CaseStatus::kFailed), 9);
  EXPECT_EQ(count(p, CaseStatus::kError), 2);
  EXPECT_EQ(count(p, CaseStatus::kSkipped), 4);
  EXPECT_EQ(count(p, CaseStatus::kXfailed), 3);
  EXPECT_EQ(count(p, CaseStatus::kXpassed), 1);

  // pytest counts reports: test_teardown_error is a pass and an error, test_fail_and_teardown_
  // error a failure and an error.
  EXPECT_TRUE(p.reported.present);
  EXPECT_EQ(p.reported.failed, 9);
  EXPECT_EQ(p.reported.passed, 15);
  EXPECT_EQ(p.reported.skipped, 4);
  EXPECT_EQ(p.reported.xfailed, 3);
  EXPECT_EQ(p.reported.xpassed, 1);
  EXPECT_EQ(p.reported.errors, 3);

  const TestCase* c = find(p, kMod, "test_pass");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kPassed);
  EXPECT_EQ(c->source.path, "tests/test_outcomes.py");

  c = find(p, kMod, "test_fail");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);
  EXPECT_EQ(c->exception, "AssertionError");
  EXPECT_EQ(c->message, "0.79 not less than or equal to 1e-05");
  EXPECT_EQ(c->source.line, 13);
  EXPECT_NE(c->traceback.find("E       assert 0.79 <= 1e-05"), std::string::npos);
  EXPECT_TRUE(c->traceback.ends_with("tests/test_outcomes.py:13: AssertionError"));

  c = find(p, kMod, "test_fail_deep");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->exception, "ValueError");
  EXPECT_EQ(c->message, "bad value 3");
  EXPECT_EQ(c->source.line, 17);  // inside helper(), the deepest frame in the test file

  c = find(p, kMod, "test_skip_inline");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kSkipped);
  EXPECT_EQ(c->message, "not on this box");

  c = find(p, kMod, "test_xfail");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kXfailed);
  EXPECT_EQ(c->message, "known bug 12");

  c = find(p, kMod, "test_xpass");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kXpassed);
  EXPECT_EQ(c->message, "maybe fixed");

  c = find(p, kMod, "test_xpass_strict");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);
  EXPECT_EQ(c->exception, "");
  EXPECT_EQ(c->message, "[XPASS(strict)] strictly broken");

  c = find(p, "tests.test_outcomes.UTest", "test_ut_expected_failure");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kXfailed);
  c = find(p, "tests.test_outcomes.UTest", "test_ut_fail");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->message, "1 != 2");
  c = find(p, "tests.test_outcomes.UTest", "test_ut_skip");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->message, "ut skip");

  c = find(p, "tests.test_outcomes.TestGroup.TestInner", "test_nested");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kPassed);
  c = find(p, "tests.test_outcomes.TestGroup", "test_method_param[1]");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);
  EXPECT_EQ(c->message, "assert 1 == 0");
  EXPECT_EQ(c->source.line, 101);
}

TEST(PytestText, SetupAndTeardownErrors) {
  ParsedFile p = parse_sample("outcomes.log");
  const TestCase* c = find(p, kMod, "test_setup_error");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kError);
  EXPECT_EQ(c->exception, "RuntimeError");
  EXPECT_EQ(c->message, "setup exploded");
  EXPECT_EQ(c->source.line, 64);  // the fixture, in the test file

  // PASSED, then ERROR at teardown: one case, error.
  c = find(p, kMod, "test_teardown_error");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kError);
  EXPECT_EQ(c->message, "teardown exploded");

  // FAILED, then ERROR at teardown: one case, failed, with the call's failure.
  int n = 0;
  for (const auto& x : p.cases) n += x.name == "test_fail_and_teardown_error" ? 1 : 0;
  EXPECT_EQ(n, 1);
  c = find(p, kMod, "test_fail_and_teardown_error");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);
  EXPECT_EQ(c->exception, "AssertionError");
  EXPECT_EQ(c->message, "assert 1 == 2");
  EXPECT_EQ(c->source.line, 82);

  // A module-scoped fixture's teardown error lands on the module's last test.
  ParsedFile m = parse_sample("module_teardown.log");
  ASSERT_EQ(m.cases.size(), 3u);
  c = find(m, "tests.test_module_teardown", "test_m2");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kError);
  EXPECT_EQ(c->message, "module teardown broke");
  // The warnings summary repeats node ids; they are no progress lines.
  EXPECT_EQ(find(m, "tests.test_module_teardown", "test_w")->status, CaseStatus::kPassed);
}

TEST(PytestText, ParametrizeIds) {
  ParsedFile p = parse_sample("outcomes.log");
  for (const char* name :
       {"test_param[1]", "test_param[a::b]", "test_param[sp ace]",
        "test_param[\\xfcn\\xef]",  // pytest escapes non-ASCII ids
        "test_param[[x]]", "test_param[a-1]", "test_param[x PASSED [ 5%]]", "test_param[a[]"}) {
    const TestCase* c = find(p, kMod, name);
    ASSERT_TRUE(c) << name;
    EXPECT_EQ(c->status, CaseStatus::kPassed) << name;
  }
  for (const char* name : {"test_param[2]", "test_param[a - b]"}) {
    const TestCase* c = find(p, kMod, name);
    ASSERT_TRUE(c) << name;
    EXPECT_EQ(c->status, CaseStatus::kFailed) << name;
    EXPECT_EQ(c->exception, "AssertionError") << name;
    EXPECT_EQ(c->source.line, 89) << name;
  }
  EXPECT_EQ(find(p, kMod, "test_param[a - b]")->message, "assert 'a - b' not in (2, 'a - b')");
}

TEST(PytestText, LongReasonsAndIds) {
  ParsedFile p = parse_sample("details.log");
  ASSERT_EQ(p.cases.size(), 9u);
  const std::string mod = "tests.test_details";
  // -v cuts the reasons to the terminal width; the summary has them whole.
  const TestCase* c = find(p, mod, "test_long_skip");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->message,
            "this is a very long skip reason that goes on and on and on beyond the width of the "
            "terminal for sure, yes");
  c = find(p, mod, "test_long_xfail");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kXfailed);
  EXPECT_EQ(c->message,
            "a very long xfail reason that goes on and on and on beyond the width of the terminal "
            "for sure, yes");
  c = find(p, mod,
           "test_long_id[a very long parameter id that is longer than the terminal width for sure "
           "and then some more text]");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kPassed);
  c = find(p, mod, "test_custom_exc");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->exception, "tests.test_details.MyError");
  EXPECT_EQ(c->message, "custom thing happened at 0x7ffe1234");
  c = find(p, mod, "test_multiline_msg");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->message, "first line");
  c = find(p, mod, "test_import_in_test");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->exception, "ModuleNotFoundError");
  EXPECT_EQ(c->message, "No module named 'torch_not_here'");
  c = find(p, mod, "test_prints_then_fails");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->message, "assert 'needle' in 'haystack'");
  // The block's "Captured stdout call" section is output, not traceback.
  EXPECT_NE(c->traceback.find("print(\"about to fail\")"), std::string::npos);
  EXPECT_EQ(c->traceback.find("Captured stdout"), std::string::npos);
  EXPECT_EQ(c->traceback.find("\nabout to fail"), std::string::npos);
}

// With -s the test's output sits between the node id and the verdict, on the same line
// ("no newline herePASSED") or later ones, and there is no progress column.
TEST(PytestText, OutputBetweenNodeIdAndVerdict) {
  ParsedFile p = parse_sample("details_s.log");
  ParsedFile q = parse_sample("details.log");
  EXPECT_FALSE(p.unfinished);
  ASSERT_EQ(p.cases.size(), q.cases.size());
  for (std::size_t i = 0; i < p.cases.size(); ++i) {
    EXPECT_EQ(p.cases[i].classname, q.cases[i].classname);
    EXPECT_EQ(p.cases[i].name, q.cases[i].name);
    EXPECT_EQ(p.cases[i].status, q.cases[i].status) << p.cases[i].name;
    EXPECT_EQ(p.cases[i].message, q.cases[i].message) << p.cases[i].name;
  }
  const TestCase* c = find(p, "tests.test_details", "test_prints_nonl");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kPassed);
}

TEST(PytestText, TracebackStyles) {
  for (const char* log : {"tb_short.log", "tb_native.log"}) {
    ParsedFile p = parse_sample(log);
    ASSERT_EQ(p.cases.size(), 3u) << log;
    const TestCase* c = find(p, "tests.test_chain", "test_chain");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->exception, "RuntimeError") << log;  // the last exception of the chain
    EXPECT_EQ(c->message, "wrapped failure") << log;
    EXPECT_EQ(c->source.line, 9) << log;
    c = find(p, "tests.test_chain", "test_assert_plain");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->exception, "AssertionError") << log;
    EXPECT_EQ(c->message, "assert 1 == 2") << log;
    EXPECT_EQ(c->source.line, 13) << log;
  }
}

// --tb=no: no report blocks; the summary's (cut) messages are all there is.
TEST(PytestText, SummaryMessagesWithoutTracebacks) {
  ParsedFile p = parse_sample("tb_no.log");
  ASSERT_EQ(p.cases.size(), 33u);
  const TestCase* c = find(p, kMod, "test_fail_deep");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->exception, "ValueError");
  EXPECT_EQ(c->message, "bad value 3");
  EXPECT_EQ(find(p, "tests.test_outcomes.TestGroup", "test_method_param[1]")->exception,
            "AssertionError");
}

// -q: no progress lines; every test but the skipped ones is named in the summary.
TEST(PytestText, QuietOutputUsesTheSummary) {
  ParsedFile p = parse_sample("quiet.log");
  EXPECT_EQ(p.cases.size(), 29u);
  EXPECT_EQ(count(p, CaseStatus::kFailed), 9);
  EXPECT_EQ(count(p, CaseStatus::kError), 2);
  EXPECT_EQ(count(p, CaseStatus::kXpassed), 1);
  EXPECT_EQ(count(p, CaseStatus::kXfailed), 3);
  EXPECT_EQ(count(p, CaseStatus::kPassed), 14);
  EXPECT_EQ(find(p, kMod, "test_fail")->message, "0.79 not less than or equal to 1e-05");
}

TEST(PytestText, CollectionErrors) {
  ParsedFile p = parse_sample("collect_error.log");
  EXPECT_TRUE(p.import_error);
  EXPECT_TRUE(p.cases.empty());
  EXPECT_NE(
      p.import_error_text.find("ModuleNotFoundError: No module named 'nonexistent_module_xyz'"),
      std::string::npos);
  EXPECT_TRUE(p.reported.present);
  EXPECT_EQ(p.reported.errors, 1);

  p = parse_sample("collect_syntax.log");
  EXPECT_TRUE(p.import_error);
  EXPECT_TRUE(p.cases.empty());
  EXPECT_NE(p.import_error_text.find("SyntaxError: invalid syntax"), std::string::npos);

  // Only the "Interrupted" line left.
  p = parse_string("!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!\n");
  EXPECT_TRUE(p.import_error);
}

TEST(PytestText, ModuleSkippedAsAWhole) {
  ParsedFile p = parse_sample("module_skip.log");
  EXPECT_FALSE(p.import_error);
  ASSERT_EQ(p.cases.size(), 1u);
  EXPECT_EQ(p.cases[0].classname, "");
  EXPECT_EQ(p.cases[0].name, "tests.test_module_skip");
  EXPECT_EQ(p.cases[0].status, CaseStatus::kSkipped);
  EXPECT_EQ(p.cases[0].message, "whole module skipped");
  EXPECT_EQ(p.cases[0].source.line, 3);
}

TEST(PytestText, NoTests) {
  ParsedFile p = parse_sample("empty.log");
  EXPECT_TRUE(p.cases.empty());
  EXPECT_FALSE(p.import_error);
  EXPECT_TRUE(p.reported.present);
  EXPECT_EQ(p.reported.passed, 0);
}

// pytest 9 reports subtests itself: SUBFAILED lines make their test failed.
TEST(PytestText, Subtests) {
  ParsedFile p = parse_sample("subtests.log");
  ASSERT_EQ(p.cases.size(), 3u);
  const TestCase* c = find(p, "tests.test_subtests.T", "test_sub");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);  // the log says PASSED, then SUBFAILED twice
  EXPECT_EQ(c->message, "1 not less than 1");
  EXPECT_EQ(c->source.line, 8);
  EXPECT_EQ(find(p, "tests.test_subtests.T", "test_sub_ok")->status, CaseStatus::kPassed);
  c = find(p, "tests.test_subtests", "test_pt_sub");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);
  EXPECT_EQ(c->message, "assert 1 != 1");
  EXPECT_EQ(p.reported.failed, 4);  // pytest counts the subtest failures
}

TEST(PytestText, CrashLeavesTheRunningTestUnfinished) {
  ParsedFile p = parse_sample("crash.log");
  ASSERT_EQ(p.cases.size(), 1u);
  EXPECT_EQ(p.cases[0].name, "test_ok");
  EXPECT_FALSE(p.reported.present);
  ASSERT_TRUE(p.unfinished);
  EXPECT_EQ(p.unfinished->classname, "tests.test_crash");
  EXPECT_EQ(p.unfinished->name, "test_segv");
  EXPECT_EQ(p.unfinished->status, CaseStatus::kError);
  EXPECT_EQ(p.unfinished->exception, "Fatal Python error");
  EXPECT_EQ(p.unfinished->message, "Segmentation fault");
  EXPECT_EQ(p.unfinished->source.path, "tests/test_crash.py");
  EXPECT_EQ(p.unfinished->source.line, 10);
  EXPECT_NE(p.unfinished->traceback.find("Current thread"), std::string::npos);
}

TEST(PytestText, TimeoutLeavesTheRunningTestUnfinished) {
  // SIGTERM: the log ends right after "tests/test_hang.py::test_hang " (no newline).
  ParsedFile p = parse_sample("timeout_term.log");
  ASSERT_EQ(p.cases.size(), 1u);
  ASSERT_TRUE(p.unfinished);
  EXPECT_EQ(p.unfinished->name, "test_hang");
  EXPECT_EQ(p.unfinished->traceback, "");

  EXPECT_FALSE(p.unfinished_ended_session);

  // SIGINT: pytest prints its summary; the interrupted test has no verdict, and pytest's banner
  // and crash line say where the KeyboardInterrupt ended the session.
  p = parse_sample("timeout_int.log");
  ASSERT_EQ(p.cases.size(), 1u);
  EXPECT_TRUE(p.reported.present);
  ASSERT_TRUE(p.unfinished);
  EXPECT_EQ(p.unfinished->classname, "tests.test_hang");
  EXPECT_EQ(p.unfinished->name, "test_hang");
  EXPECT_TRUE(p.unfinished_ended_session);
  EXPECT_EQ(p.unfinished->exception, "KeyboardInterrupt");
  EXPECT_EQ(p.unfinished->source.line, 10);
  // The banner and the crash line, printed after the summary section began, are its traceback.
  EXPECT_NE(p.unfinished->traceback.find(" KeyboardInterrupt !!!"), std::string::npos);
  EXPECT_NE(p.unfinished->traceback.find("test_hang.py:10: KeyboardInterrupt"), std::string::npos);
}

// A test's own output (here under -s) can print a line like pytest's banner: it ends no session
// when the test then gets its verdict, nor when no closing counts line follows it.
TEST(PytestText, ABannerInATestsOutputEndsNoSession) {
  const std::string log = read_sample("details_s.log");
  const std::string at = "tests/test_details.py::test_prints hello from the test\n";
  const std::size_t pos = log.find(at);
  ASSERT_NE(pos, std::string::npos);
  const std::string banner = std::string(30, '!') + " KeyboardInterrupt " + std::string(30, '!') +
                             "\ntests/test_details.py:12: KeyboardInterrupt\n";
  const std::string edited = log.substr(0, pos + at.size()) + banner + log.substr(pos + at.size());
  ParsedFile p = parse_string(edited);
  ParsedFile q = parse_sample("details_s.log");
  EXPECT_FALSE(p.unfinished);
  EXPECT_FALSE(p.unfinished_ended_session);
  ASSERT_EQ(p.cases.size(), q.cases.size());
  for (std::size_t i = 0; i < p.cases.size(); ++i) {
    EXPECT_EQ(p.cases[i].status, q.cases[i].status) << p.cases[i].name;
  }

  // The process killed right after such a line: the test is unfinished, the session not ended.
  p = parse_string(log.substr(0, pos + at.size()) + banner);
  ASSERT_TRUE(p.unfinished);
  EXPECT_EQ(p.unfinished->name, "test_prints");
  EXPECT_FALSE(p.unfinished_ended_session);
  EXPECT_EQ(p.unfinished->exception, "");
}

TEST(PytestText, LogCutMidTest) {
  std::string log = read_sample("outcomes.log");
  const std::string cut_at = "tests/test_outcomes.py::test_param[a - b] ";
  std::size_t pos = log.find(cut_at);
  ASSERT_NE(pos, std::string::npos);
  ParsedFile p = parse_string(log.substr(0, pos + cut_at.size()));
  EXPECT_EQ(p.cases.size(), 21u);  // every test before it
  EXPECT_FALSE(p.reported.present);
  ASSERT_TRUE(p.unfinished);
  EXPECT_EQ(p.unfinished->classname, "tests.test_outcomes");
  EXPECT_EQ(p.unfinished->name, "test_param[a - b]");
  // Without the report sections, the progress lines alone give the statuses.
  EXPECT_EQ(find(p, kMod, "test_fail")->status, CaseStatus::kFailed);
  EXPECT_EQ(find(p, kMod, "test_teardown_error")->status, CaseStatus::kError);
  EXPECT_EQ(find(p, kMod, "test_skip_inline")->message, "not on this box");

  // Cut inside a test's output (capture off): the output is the unfinished test's traceback.
  p = parse_string(
      "collecting ... collected 2 items\n\n"
      "tests/x.py::test_a PASSED\n"
      "tests/x.py::test_b[sp ace] step 1\n"
      "step 2\n"
      "Traceback (most recent call last):\n"
      "  File \"/p/tests/x.py\", line 7, in test_b\n"
      "MemoryError: out of memory\n");
  ASSERT_EQ(p.cases.size(), 1u);
  ASSERT_TRUE(p.unfinished);
  EXPECT_EQ(p.unfinished->name, "test_b[sp ace]");
  EXPECT_EQ(p.unfinished->exception, "MemoryError");
  EXPECT_EQ(p.unfinished->source.line, 7);
  EXPECT_NE(p.unfinished->traceback.find("step 1\nstep 2"), std::string::npos);
}

TEST(PytestText, ProgressVariants) {
  ParsedFile p = parse_string(
      "\x1b[1m============================= test session starts ==============\x1b[0m\n"
      "collected 5 items\n"
      "\n"
      "tests/x.py::test_a \x1b[32mPASSED\x1b[0m\x1b[32m                        [ 1/5]\x1b[0m\n"
      "tests/x.py::test_b SKIPPED (reason (with) parens)  [ 2/5]\n"
      "tests/x.py::test_c XFAIL                           [ 3/5]\n"
      "tests/x.py::test_d\r\rtests/x.py::test_d FAILED    [ 4/5]\n"
      "tests/x.py::T::test_e[x] output that says FAILED at the end\n"
      "more output PASSED\n"  // no progress column: not the verdict once one was seen
      "PASSED  [5/5]\n"
      "======================== 1 failed, 2 passed, 1 skipped, 1 xfailed in 1.5s (0:00:01) ===\n");
  ASSERT_EQ(p.cases.size(), 5u);
  EXPECT_EQ(p.cases[0].status, CaseStatus::kPassed);
  EXPECT_EQ(p.cases[1].status, CaseStatus::kSkipped);
  EXPECT_EQ(p.cases[1].message, "reason (with) parens");
  EXPECT_EQ(p.cases[2].status, CaseStatus::kXfailed);
  EXPECT_EQ(p.cases[3].status, CaseStatus::kFailed);
  EXPECT_EQ(p.cases[4].classname, "tests.x.T");
  EXPECT_EQ(p.cases[4].name, "test_e[x]");
  EXPECT_EQ(p.cases[4].status, CaseStatus::kPassed);
  EXPECT_FALSE(p.unfinished);
  EXPECT_TRUE(p.reported.present);
  EXPECT_EQ(p.reported.passed, 2);
  EXPECT_EQ(p.reported.xfailed, 1);
}

TEST(PytestText, GarbageNeverCrashes) {
  EXPECT_TRUE(parse_string("").cases.empty());
  std::string junk;
  for (int i = 0; i < 5000; ++i) junk.push_back(static_cast<char>((i * 7919) % 256));
  parse_string(junk);
  // Every prefix of a real log parses (the output can stop anywhere).
  std::string log = read_sample("outcomes.log");
  for (std::size_t n = 0; n < log.size(); n += 97) parse_string(log.substr(0, n));
  // Half-formed lines.
  ParsedFile p = parse_string(
      "=\n==\n= =\n___\n_ _\n!!!\n::\n.py::\nx.py::\nx.py::[\nx.py::t[ PASSED\n"
      "==== FAILURES ====\n____ ____\n_____ t _____\nE\nE   \nx.py:: - \nx.py:9999999999999: X\n"
      "==== short test summary info ====\nFAILED\nFAILED \nSKIPPED\nSKIPPED [\nSKIPPED [1] "
      ":1:\nSUBFAILED x\nERROR  - \n==== 1 failed in  ====\n=== x in 1s ===\n");
  EXPECT_FALSE(p.reported.present);
}

TEST(PytestText, HugeLogInBoundedTime) {
  // 20,000 tests, every 10th failing with a traceback.
  std::string log = "collecting ... collected 20000 items\n\n";
  for (int i = 0; i < 20000; ++i) {
    log += "tests/test_big.py::test_" + std::to_string(i) + (i % 10 ? " PASSED" : " FAILED") +
           "   [ 50%]\n";
  }
  log += "=================================== FAILURES ===================================\n";
  for (int i = 0; i < 20000; i += 10) {
    log += "___ test_" + std::to_string(i) +
           " ___\n\n>   assert 0\nE   assert 0\n\ntests/test_big.py:" + std::to_string(i + 1) +
           ": AssertionError\n";
  }
  log += "=== 2000 failed, 18000 passed in 10.00s ===\n";
  ParsedFile p = parse_string(std::move(log));
  ASSERT_EQ(p.cases.size(), 20000u);
  EXPECT_EQ(count(p, CaseStatus::kFailed), 2000);
  EXPECT_EQ(find(p, "tests.test_big", "test_990")->source.line, 991);
  EXPECT_EQ(p.reported.failed, 2000);
}

}  // namespace
}  // namespace devshim
