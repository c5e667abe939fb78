// Tests of the pytest JUnit XML parser on real pytest 9.2 output (tests/parsers/pytest_samples/,
// made by capture.py there), its agreement with the text parser on the same runs, and the
// combined reader.
#include "parsers/pytest_junit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "base/error.h"
#include "parsers/gap_attribution.h"
#include "parsers/line_reader.h"
#include "parsers/pytest_text.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;

const fs::path kSamples = PARSER_SAMPLES_DIR;
const fs::path kFixtures = PARSER_FIXTURES_DIR;

std::string read_sample(const std::string& name) {
  std::ifstream in(kSamples / name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ParsedFile text_of(const std::string& log) {
  LineReader lines(kSamples / log);
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

// A scratch folder removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    path_ = fs::temp_directory_path() /
            ("devshim_pytest_junit_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path write(const std::string& name, const std::string& content) const {
    fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

constexpr std::string_view kMod = "tests.test_outcomes";

// pyro's examples run as child processes (`check_call`); the failure is the child's, printed in
// the test's captured stderr, which the XML lacks: the log's copy is kept after the test's own
// traceback (tests/parsers/fixtures/gaps/issue32/README.md).
TEST(PytestJunit, AFailedChildProcessKeepsItsTracebackFromTheLog) {
  const fs::path dir = kFixtures / "gaps" / "issue32";
  const fs::path xml = dir / "pyro-keep-test_examples-child.xml";
  const fs::path log = dir / "pyro-keep-test_examples-child.log";
  LineReader lines(log);
  for (const ParsedFile& p : {parse_pytest_results(xml, log), parse_pytest_text(lines)}) {
    ASSERT_EQ(p.cases.size(), 2U);
    const TestCase* failed = nullptr;
    for (const TestCase& c : p.cases) failed = c.status == CaseStatus::kFailed ? &c : failed;
    ASSERT_TRUE(failed);
    EXPECT_EQ(failed->exception, "subprocess.CalledProcessError");
    const auto child = child_failure(failed->exception, failed->traceback);
    ASSERT_TRUE(child) << failed->traceback;
    EXPECT_EQ(child->exception, "ModuleNotFoundError");
    EXPECT_EQ(child->message, "No module named 'torchvision'");
    EXPECT_NE(child->traceback.find("examples/contrib/gp/sv-dkl.py\", line 37"), std::string::npos);
    EXPECT_EQ(failed->traceback.find("Captured log call"), std::string::npos) << "stderr only";
  }
  // Another exception's captured stderr is not its failure.
  EXPECT_FALSE(child_failure("AssertionError", std::string(kChildTracebackHeader) +
                                                   "\nTraceback (most recent call last):\n"
                                                   "ValueError: x\n"));
}

TEST(PytestJunit, EveryOutcome) {
  auto parsed = parse_pytest_junit(kSamples / "outcomes.xml");
  ASSERT_TRUE(parsed);
  const ParsedFile& p = *parsed;
  EXPECT_FALSE(p.import_error);
  ASSERT_EQ(p.cases.size(), 33u);                // 34 testcase elements: one test is listed twice
  EXPECT_EQ(count(p, CaseStatus::kPassed), 15);  // the non-strict XPASS among them
  EXPECT_EQ(count(p, CaseStatus::kFailed), 9);
  EXPECT_EQ(count(p, CaseStatus::kError), 2);
  EXPECT_EQ(count(p, CaseStatus::kSkipped), 4);
  EXPECT_EQ(count(p, CaseStatus::kXfailed), 3);
  EXPECT_EQ(count(p, CaseStatus::kXpassed), 0);

  // <testsuite errors="3" failures="9" skipped="7" tests="34">: xfails counted as skipped.
  EXPECT_TRUE(p.reported.present);
  EXPECT_EQ(p.reported.failed, 9);
  EXPECT_EQ(p.reported.errors, 3);
  EXPECT_EQ(p.reported.skipped, 4);
  EXPECT_EQ(p.reported.xfailed, 3);
  EXPECT_EQ(p.reported.passed, 15);

  const TestCase* c = find(p, kMod, "test_pass");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kPassed);
  EXPECT_EQ(c->source.path, "tests/test_outcomes.py");
  EXPECT_EQ(c->source.line, 7);  // line="6": pytest writes it 0-based

  c = find(p, kMod, "test_skip_decorated");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kSkipped);
  EXPECT_EQ(c->message, "decorated skip");
  EXPECT_EQ(c->source.line, 28);  // the function's first line is its decorator

  c = find(p, kMod, "test_fail");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);
  EXPECT_EQ(c->exception, "AssertionError");
  EXPECT_EQ(c->message, "0.79 not less than or equal to 1e-05");
  EXPECT_EQ(c->source.line, 13);  // the failing line, from the traceback
  EXPECT_GE(c->duration_s, 0.0);
  EXPECT_NE(c->traceback.find("E       assert 0.79 <= 1e-05"), std::string::npos);
  EXPECT_TRUE(c->traceback.ends_with("tests/test_outcomes.py:13: AssertionError"));

  c = find(p, kMod, "test_fail_deep");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->exception, "ValueError");
  EXPECT_EQ(c->message, "bad value 3");
  EXPECT_EQ(c->source.line, 17);

  c = find(p, kMod, "test_xfail");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kXfailed);
  EXPECT_EQ(c->message, "known bug 12");

  c = find(p, kMod, "test_xpass_strict");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);
  EXPECT_EQ(c->exception, "");
  EXPECT_EQ(c->message, "[XPASS(strict)] strictly broken");

  c = find(p, kMod, "test_xpass");  // xunit1 has no mark for a non-strict XPASS
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kPassed);

  for (const char* name : {"test_param[a::b]", "test_param[sp ace]", "test_param[\\xfcn\\xef]",
                           "test_param[[x]]", "test_param[x PASSED [ 5%]]", "test_param[a[]"}) {
    c = find(p, kMod, name);
    ASSERT_TRUE(c) << name;
    EXPECT_EQ(c->status, CaseStatus::kPassed) << name;
  }
  c = find(p, kMod, "test_param[a - b]");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);
  EXPECT_EQ(c->source.line, 89);

  c = find(p, "tests.test_outcomes.TestGroup.TestInner", "test_nested");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->source.line, 104);
  c = find(p, "tests.test_outcomes.UTest", "test_ut_fail");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->message, "1 != 2");
  EXPECT_EQ(c->source.line, 113);
}

TEST(PytestJunit, SetupAndTeardownErrors) {
  auto p = parse_pytest_junit(kSamples / "outcomes.xml");
  ASSERT_TRUE(p);
  const TestCase* c = find(*p, kMod, "test_setup_error");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kError);
  // From the traceback, not from the attribute 'failed on setup with "RuntimeError: ..."'.
  EXPECT_EQ(c->exception, "RuntimeError");
  EXPECT_EQ(c->message, "setup exploded");
  EXPECT_EQ(c->source.line, 64);

  c = find(*p, kMod, "test_teardown_error");  // passed, then error in teardown
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kError);
  EXPECT_EQ(c->message, "teardown exploded");

  // Two testcase elements, <failure> then <error>: one case, failed.
  int n = 0;
  for (const auto& x : p->cases) n += x.name == "test_fail_and_teardown_error" ? 1 : 0;
  EXPECT_EQ(n, 1);
  c = find(*p, kMod, "test_fail_and_teardown_error");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);
  EXPECT_EQ(c->message, "assert 1 == 2");
  EXPECT_EQ(c->source.line, 82);
}

// --tb=no: the text is only the E lines; the message attribute and the text agree.
TEST(PytestJunit, WithoutTracebacks) {
  auto p = parse_pytest_junit(kSamples / "tb_no.xml");
  ASSERT_TRUE(p);
  const TestCase* c = find(*p, kMod, "test_fail");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->exception, "AssertionError");
  EXPECT_EQ(c->message, "0.79 not less than or equal to 1e-05");
  EXPECT_EQ(c->source.line, 11);  // no frame: the definition
  c = find(*p, kMod, "test_setup_error");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->exception, "RuntimeError");
  EXPECT_EQ(c->message, "setup exploded");
}

TEST(PytestJunit, DetailsAndTracebackStyles) {
  auto p = parse_pytest_junit(kSamples / "details.xml");
  ASSERT_TRUE(p);
  const TestCase* c = find(*p, "tests.test_details", "test_custom_exc");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->exception, "tests.test_details.MyError");
  EXPECT_EQ(c->message, "custom thing happened at 0x7ffe1234");
  c = find(*p, "tests.test_details", "test_long_skip");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->message,
            "this is a very long skip reason that goes on and on and on beyond the width of the "
            "terminal for sure, yes");
  for (const char* xml : {"tb_short.xml", "tb_native.xml"}) {
    auto q = parse_pytest_junit(kSamples / xml);
    ASSERT_TRUE(q) << xml;
    c = find(*q, "tests.test_chain", "test_chain");
    ASSERT_TRUE(c) << xml;
    EXPECT_EQ(c->exception, "RuntimeError") << xml;
    EXPECT_EQ(c->message, "wrapped failure") << xml;
    EXPECT_EQ(c->source.line, 9) << xml;
  }
}

TEST(PytestJunit, CollectionErrorIsAnImportError) {
  for (const char* xml : {"collect_error.xml", "collect_syntax.xml"}) {
    auto p = parse_pytest_junit(kSamples / xml);
    ASSERT_TRUE(p) << xml;
    EXPECT_TRUE(p->import_error) << xml;
    EXPECT_TRUE(p->cases.empty()) << xml;
    EXPECT_EQ(p->reported.errors, 1) << xml;
  }
  auto p = parse_pytest_junit(kSamples / "collect_error.xml");
  EXPECT_NE(p->import_error_text.find("No module named 'nonexistent_module_xyz'"),
            std::string::npos);
}

TEST(PytestJunit, ModuleSkippedAsAWhole) {
  auto p = parse_pytest_junit(kSamples / "module_skip.xml");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->import_error);
  ASSERT_EQ(p->cases.size(), 1u);
  EXPECT_EQ(p->cases[0].classname, "");
  EXPECT_EQ(p->cases[0].name, "tests.test_module_skip");
  EXPECT_EQ(p->cases[0].status, CaseStatus::kSkipped);
  EXPECT_EQ(p->cases[0].message, "whole module skipped");
  EXPECT_EQ(p->cases[0].source.path, "tests/test_module_skip.py");
  EXPECT_EQ(p->cases[0].source.line, 3);
}

TEST(PytestJunit, SubtestsAndInterrupts) {
  auto p = parse_pytest_junit(kSamples / "subtests.xml");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->cases.size(), 3u);
  const TestCase* c = find(*p, "tests.test_subtests.T", "test_sub");  // two <failure>s
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kFailed);
  EXPECT_EQ(c->message, "1 not less than 1");

  // KeyboardInterrupt: pytest writes a <testcase time="0.000"/> with no name for the running test.
  p = parse_pytest_junit(kSamples / "timeout_int.xml");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->cases.size(), 1u);
  EXPECT_EQ(p->cases[0].name, "test_ok");

  p = parse_pytest_junit(kSamples / "empty.xml");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->cases.empty());
  EXPECT_TRUE(p->reported.present);
}

TEST(PytestJunit, MissingEmptyTruncatedOrForeignXmlIsNullopt) {
  ScratchDir dir;
  EXPECT_FALSE(parse_pytest_junit(dir.path() / "missing.xml"));
  EXPECT_FALSE(parse_pytest_junit(dir.path() / "no_dir" / "missing.xml"));
  EXPECT_FALSE(parse_pytest_junit(dir.write("empty.xml", "")));
  EXPECT_FALSE(parse_pytest_junit(dir.write("blank.xml", "\n  \n")));
  EXPECT_FALSE(parse_pytest_junit(dir.write("foreign.xml", "<?xml version=\"1.0\"?><html/>")));
  EXPECT_FALSE(parse_pytest_junit(dir.write("garbage.xml", "\x01\x02 not xml at all <<<")));

  // The process died while writing: the file stops in the middle.
  const std::string xml = read_sample("outcomes.xml");
  EXPECT_FALSE(parse_pytest_junit(dir.write("half.xml", xml.substr(0, xml.size() / 2))));
  EXPECT_FALSE(parse_pytest_junit(dir.write("nearly.xml", xml.substr(0, xml.size() - 3))));
  // Wherever it stops, no crash, and never a result from a cut document.
  for (std::size_t n = 1; n < xml.size(); n += 131) {
    EXPECT_FALSE(parse_pytest_junit(dir.write("cut.xml", xml.substr(0, n)))) << n;
  }
}

TEST(PytestJunit, UnreadableFileThrows) {
  ScratchDir dir;
  fs::create_directories(dir.path() / "a_dir.xml");
  EXPECT_THROW(parse_pytest_junit(dir.path() / "a_dir.xml"), RuntimeError);
}

TEST(PytestJunit, OddButWellFormedDocuments) {
  ScratchDir dir;
  // A bare <testsuite>, nested suites, missing attributes, unknown children, odd numbers.
  auto p = parse_pytest_junit(dir.write(
      "odd.xml",
      "<testsuite tests='3' failures='1' errors='0' skipped='x'>"
      "<testcase name='t1'/>"
      "<testcase classname='a.b' name='t2' line='-5' time='nan?'><failure>E   ValueError: v"
      "</failure><system-out>out</system-out></testcase>"
      "<testsuite tests='1'><testcase classname='a.b' name='t3'><skipped/></testcase></testsuite>"
      "<testcase classname='a.b'/>"
      "</testsuite>"));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->cases.size(), 3u);
  EXPECT_EQ(p->cases[0].name, "t1");
  EXPECT_EQ(p->cases[1].status, CaseStatus::kFailed);
  EXPECT_EQ(p->cases[1].exception, "ValueError");
  EXPECT_EQ(p->cases[1].message, "v");
  EXPECT_EQ(p->cases[1].source.line, 0);
  EXPECT_EQ(p->cases[2].status, CaseStatus::kSkipped);
  EXPECT_EQ(p->reported.failed, 1);
}

// The same run read from its XML and from its log gives the same tests with the same outcomes
// (the non-strict XPASS aside: xunit1 writes it as a plain pass).
TEST(PytestJunitAndText, SameTestsSameOutcomes) {
  using Key = std::tuple<std::string, std::string, CaseStatus>;
  for (const char* sample :
       {"outcomes", "details", "details_s", "tb_short", "tb_native", "tb_no", "collect_error",
        "collect_syntax", "module_skip", "module_teardown", "empty", "subtests", "timeout_int"}) {
    auto junit = parse_pytest_junit(kSamples / (std::string(sample) + ".xml"));
    ASSERT_TRUE(junit) << sample;
    ParsedFile text = text_of(std::string(sample) + ".log");
    std::set<Key> from_xml, from_log;
    for (const auto& c : junit->cases) {
      CaseStatus s = c.status;
      if (const TestCase* t = find(text, c.classname, c.name);
          t && s == CaseStatus::kPassed && t->status == CaseStatus::kXpassed) {
        s = CaseStatus::kXpassed;
      }
      from_xml.emplace(c.classname, c.name, s);
    }
    for (const auto& c : text.cases) from_log.emplace(c.classname, c.name, c.status);
    EXPECT_EQ(from_xml, from_log) << sample;
    EXPECT_EQ(junit->cases.size(), text.cases.size()) << sample;
    EXPECT_EQ(junit->import_error, text.import_error) << sample;
    // Failures agree on what failed and where.
    for (const auto& c : junit->cases) {
      const TestCase* t = find(text, c.classname, c.name);
      if (!t || !is_failure(c.status)) continue;
      EXPECT_EQ(c.exception, t->exception) << sample << " " << c.name;
      // --tb=no leaves the log only the summary's messages, cut to the terminal width, and no
      // frame.
      if (std::string_view(sample) == "tb_no") continue;
      EXPECT_EQ(c.message, t->message) << sample << " " << c.name;
      // Without a frame in the test file the log knows no line; the XML gives the definition's.
      if (t->source.line > 0) {
        EXPECT_EQ(c.source.line, t->source.line) << sample << " " << c.name;
      }
    }
  }
}

TEST(PytestResults, XmlRefinedByTheLog) {
  ParsedFile p = parse_pytest_results(kSamples / "outcomes.xml", kSamples / "outcomes.log");
  const TestCase* c = find(p, kMod, "test_xpass");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, CaseStatus::kXpassed);
  EXPECT_EQ(c->message, "maybe fixed");
  EXPECT_GT(find(p, kMod, "test_fail")->source.line, 0);
  EXPECT_EQ(p.reported.xpassed, 1);
  EXPECT_EQ(p.reported.xfailed, 3);

  // Interrupted: the XML is complete but the log knows which test was running.
  p = parse_pytest_results(kSamples / "timeout_int.xml", kSamples / "timeout_int.log");
  ASSERT_EQ(p.cases.size(), 1u);
  ASSERT_TRUE(p.unfinished);
  EXPECT_EQ(p.unfinished->name, "test_hang");
}

TEST(PytestResults, FallsBackToTheLog) {
  ScratchDir dir;
  // Crashed: no XML at all.
  ParsedFile p = parse_pytest_results(dir.path() / "crash.xml", kSamples / "crash.log");
  ASSERT_EQ(p.cases.size(), 1u);
  ASSERT_TRUE(p.unfinished);
  EXPECT_EQ(p.unfinished->name, "test_segv");

  // Killed while writing the XML.
  const std::string xml = read_sample("outcomes.xml");
  p = parse_pytest_results(dir.write("cut.xml", xml.substr(0, xml.size() / 3)),
                           kSamples / "outcomes.log");
  EXPECT_EQ(p.cases.size(), 33u);
  EXPECT_EQ(find(p, kMod, "test_xpass")->status, CaseStatus::kXpassed);

  // A good XML needs no log.
  p = parse_pytest_results(kSamples / "outcomes.xml", dir.path() / "missing.log");
  EXPECT_EQ(p.cases.size(), 33u);

  EXPECT_THROW(parse_pytest_results(dir.path() / "missing.xml", dir.path() / "missing.log"),
               RuntimeError);
}

// The shared fixtures (tests/parsers/fixtures/, with pytest's own verdicts in *.expected.json):
// both parsers give every test its pytest outcome. The JSON lists one case per pytest report (a
// test that failed and errored in teardown twice, subtests apart); the parsers give one case per
// test, keeping the worse outcome, and the details of the report that decided it.
std::string json_text(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::string() : it->get<std::string>();
}

struct Expected {
  CaseStatus status = CaseStatus::kPassed;
  const nlohmann::json* decisive = nullptr;  // the report whose outcome the test keeps
};

void check_against_fixture(const ParsedFile& p, const nlohmann::json& want, bool from_xml,
                           const std::string& what) {
  std::map<std::pair<std::string, std::string>, Expected> tests;
  bool collection_error = false;
  for (const auto& c : want["cases"]) {
    std::string kind = c["kind"];
    if (kind == "collection_error") {
      collection_error = true;
      continue;
    }
    auto status = parse_case_status(c["status"].get<std::string>());
    ASSERT_TRUE(status) << what;
    auto key = std::make_pair(json_text(c, "classname"), json_text(c, "name"));
    auto [it, inserted] = tests.emplace(key, Expected{*status, &c});
    if (!inserted && outcome_rank(*status) > outcome_rank(it->second.status)) {
      it->second = Expected{*status, &c};
    }
  }
  EXPECT_EQ(p.import_error, collection_error) << what;
  EXPECT_EQ(p.cases.size(), tests.size()) << what;
  for (const auto& [key, exp] : tests) {
    const std::string id = what + " " + key.first + "::" + key.second;
    const TestCase* c = find(p, key.first, key.second);
    ASSERT_TRUE(c) << id;
    CaseStatus status = exp.status;
    if (from_xml && status == CaseStatus::kXpassed) status = CaseStatus::kPassed;  // xunit1
    EXPECT_EQ(to_string(c->status), to_string(status)) << id;
    const nlohmann::json& d = *exp.decisive;
    if (status == CaseStatus::kSkipped || status == CaseStatus::kXfailed) {
      EXPECT_EQ(c->message, json_text(d, "message")) << id;
    }
    if (!is_failure(status) || c->traceback.empty()) continue;  // no report block (log cut)
    EXPECT_EQ(c->message, json_text(d, "message")) << id;
    // pytest prints no exception type for some reports ("Unexpected success").
    bool has_e_line =
        c->traceback.find("\nE ") != std::string::npos || c->traceback.rfind("E ", 0) == 0;
    if (has_e_line) {
      EXPECT_EQ(c->exception, json_text(d, "exception")) << id;
    }
    if (!d["failure_line"].is_null()) {
      EXPECT_EQ(c->source.line, d["failure_line"].get<int>()) << id;
    }
  }
}

TEST(PytestFixtures, BothParsersAgreeWithPytest) {
  const fs::path manifest_path = kFixtures / "manifest.json";
  if (!fs::exists(manifest_path)) GTEST_SKIP() << "no " << manifest_path;
  nlohmann::json manifest = nlohmann::json::parse(std::ifstream(manifest_path));
  int checked = 0;
  for (const auto& f : manifest["fixtures"]) {
    if (f["framework"] != "pytest") continue;
    nlohmann::json want = nlohmann::json::parse(std::ifstream(kFixtures / f["expected"]));
    const std::string name = f["name"];

    LineReader lines(kFixtures / f["log"].get<std::string>());
    ParsedFile text = parse_pytest_text(lines);
    check_against_fixture(text, want, false, name + " (log)");
    const nlohmann::json& unfinished = want["unfinished"];
    EXPECT_EQ(text.unfinished.has_value(), !unfinished.is_null()) << name;
    if (text.unfinished && !unfinished.is_null()) {
      EXPECT_EQ(text.unfinished->classname, unfinished["classname"]) << name;
      EXPECT_EQ(text.unfinished->name, unfinished["name"]) << name;
      // A test that ended the session itself: the exception pytest's hook got, and the line
      // pytest printed under its banner (a KeyboardInterrupt's; pytest.exit() prints none).
      const bool ended_session = unfinished.contains("exception");
      EXPECT_EQ(text.unfinished_ended_session, ended_session) << name;
      if (ended_session) {
        EXPECT_EQ(text.unfinished->exception, json_text(unfinished, "exception")) << name;
        EXPECT_EQ(text.unfinished->message, json_text(unfinished, "message")) << name;
        if (text.unfinished->exception == "KeyboardInterrupt") {
          EXPECT_EQ(text.unfinished->source.line, unfinished["failure_line"].get<int>()) << name;
        }
      }
    }
    const nlohmann::json& reported = want["reported"];
    EXPECT_EQ(text.reported.present, !reported.is_null()) << name;
    if (!reported.is_null()) {
      const nlohmann::json& n = reported["counts"];
      auto get = [&](const char* k) { return n.contains(k) ? n[k].get<int>() : 0; };
      EXPECT_EQ(text.reported.passed, get("passed")) << name;
      EXPECT_EQ(text.reported.failed, get("failed")) << name;
      EXPECT_EQ(text.reported.errors, get("error")) << name;
      EXPECT_EQ(text.reported.skipped, get("skipped")) << name;
      EXPECT_EQ(text.reported.xfailed, get("xfailed")) << name;
      EXPECT_EQ(text.reported.xpassed, get("xpassed")) << name;
    }

    if (f["junit_xml"].is_null()) {
      EXPECT_FALSE(parse_pytest_junit(kFixtures / (name + ".no.xml"))) << name;
    } else {
      auto junit = parse_pytest_junit(kFixtures / f["junit_xml"].get<std::string>());
      ASSERT_TRUE(junit) << name;
      check_against_fixture(*junit, want, true, name + " (xml)");
      ParsedFile both = parse_pytest_results(kFixtures / f["junit_xml"].get<std::string>(),
                                             kFixtures / f["log"].get<std::string>());
      check_against_fixture(both, want, false, name + " (xml + log)");
      EXPECT_EQ(both.unfinished.has_value(), !unfinished.is_null()) << name;
      EXPECT_EQ(both.unfinished_ended_session, text.unfinished_ended_session) << name;
    }
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

}  // namespace
}  // namespace devshim
