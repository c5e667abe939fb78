// The GoogleTest parsers against the real output of the fixture programs in
// tests/parsers/fixtures/gtest (capture.py there, GoogleTest's own verdicts in
// <name>.expected.json), and the XML reader on hand-made documents.
#include "parsers/gtest_xml.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "parsers/line_reader.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;
using testing::write_file;

const fs::path kGtestFixtures = fs::path(PARSER_FIXTURES_DIR) / "gtest";

std::vector<std::string> gtest_fixtures() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(kGtestFixtures)) {
    const std::string name = entry.path().filename().string();
    if (fs::exists(entry.path() / (name + ".expected.json"))) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

json load(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

std::string text_or_empty(const json& j) { return j.is_string() ? j.get<std::string>() : ""; }

const TestCase* find(const ParsedFile& p, const std::string& classname, const std::string& name) {
  for (const TestCase& c : p.cases) {
    if (c.classname == classname && c.name == name) return &c;
  }
  return nullptr;
}

// A path GoogleTest printed, as the parsers give it for this project root.
std::string relative(const std::string& path, const std::string& root) {
  fs::path rel = fs::path(path).lexically_relative(root);
  return rel.empty() || rel.generic_string().starts_with("..") ? path : rel.generic_string();
}

enum class Source { kXml, kText, kBoth };

void check(const ParsedFile& p, const json& want, Source from, const std::string& what) {
  const std::string root = want["source_root"];
  const std::string program = want["program"];
  std::size_t tests = 0;
  for (const json& c : want["cases"]) {
    ++tests;
    const std::string id =
        what + " " + c["classname"].get<std::string>() + "::" + c["name"].get<std::string>();
    const TestCase* got = find(p, c["classname"], c["name"]);
    ASSERT_TRUE(got) << id;
    EXPECT_EQ(to_string(got->status), c["status"].get<std::string>()) << id;
    // Durations: GoogleTest's milliseconds (the XML writes them as seconds).
    EXPECT_NEAR(got->duration_s, c["elapsed_ms"].get<double>() / 1000, 0.0005) << id;
    const json* part = nullptr;
    if (c["status"] == "failed") part = &c["failures"][0];
    if (c["status"] == "skipped") part = &c["skip"];
    if (part != nullptr) {
      EXPECT_EQ(got->message, gtest_message(text_or_empty((*part)["message"]))) << id;
    } else {
      EXPECT_EQ(got->message, "") << id;
    }
    if (c["status"] == "failed") {
      EXPECT_NE(got->traceback.find(text_or_empty((*part)["message"]).substr(0, 40)),
                std::string::npos)
          << id;
    }
    // Source: the first failure's (or the skip's) place, else (XML) the test's own.
    std::string path;
    int line = 0;
    if (part != nullptr && (*part)["file"].is_string()) {
      path = relative((*part)["file"], root);
      line = (*part)["line"];
    } else if (from != Source::kText) {
      path = relative(c["file"], root);
      line = c["line"];
    }
    EXPECT_EQ(got->source.path, path) << id;
    EXPECT_EQ(got->source.line, line) << id;
    if (!path.empty()) {
      EXPECT_EQ(path.rfind("src/", 0), 0U) << id << ": relative to the root";
    }
  }
  // Disabled tests are no cases.
  for (const json& d : want["disabled"].is_array() ? want["disabled"] : json::array()) {
    EXPECT_FALSE(find(p, program + "." + d["suite"].get<std::string>(), d["name"])) << what;
  }

  // Failures outside test bodies: error cases named after where they happened. The XML alone
  // has no suite-level failures (GoogleTest 1.12 does not write them) and no set-up/tear-down
  // split of the environment's.
  std::map<std::pair<std::string, std::string>, const json*> errors;
  if (from != Source::kXml) {
    for (const json& f : want["suite_failures"]) {
      errors[{program + "." + f["suite"].get<std::string>(), f["phase"]}] = &f;
    }
    for (const json& f : want["environment_failures"]) {
      errors[{program, "Environment::" + f["phase"].get<std::string>()}] = &f;
    }
  } else if (!want["environment_failures"].empty()) {
    errors[{program, "Environment"}] = &want["environment_failures"][0];
  }
  for (const auto& [key, f] : errors) {
    const std::string id = what + " " + key.first + "::" + key.second;
    const TestCase* got = find(p, key.first, key.second);
    ASSERT_TRUE(got) << id;
    EXPECT_EQ(got->status, CaseStatus::kError) << id;
    const json& first = (*f)["failures"][0];
    EXPECT_EQ(got->message, gtest_message(first["message"].get<std::string>())) << id;
    EXPECT_EQ(got->source.path, relative(first["file"], root)) << id;
    EXPECT_EQ(got->source.line, first["line"].get<int>()) << id;
  }
  EXPECT_EQ(p.cases.size(), tests + errors.size()) << what;

  // The test that was running when the output stopped.
  const json& unfinished = want["unfinished"];
  if (from == Source::kXml) {
    EXPECT_FALSE(p.unfinished) << what;
  } else {
    EXPECT_EQ(p.unfinished.has_value(), unfinished.is_object()) << what;
    if (p.unfinished && unfinished.is_object()) {
      EXPECT_EQ(p.unfinished->classname, unfinished["classname"]) << what;
      EXPECT_EQ(p.unfinished->name, unfinished["name"]) << what;
      EXPECT_EQ(p.unfinished->message, "") << what << ": the runner says how the process ended";
    }
  }

  // The counts GoogleTest printed (the XML counts all but its failed suites).
  const json& reported = want["reported"];
  EXPECT_EQ(p.reported.present, reported.is_object()) << what;
  if (reported.is_object()) {
    EXPECT_EQ(p.reported.ran, reported["ran"].get<int>()) << what;
    EXPECT_EQ(p.reported.passed, reported["passed"].get<int>()) << what;
    EXPECT_EQ(p.reported.failed, reported["failed"].get<int>()) << what;
    EXPECT_EQ(p.reported.skipped, reported["skipped"].get<int>()) << what;
    EXPECT_EQ(p.reported.errors, from == Source::kXml ? 0 : reported["failed_suites"].get<int>())
        << what;
    EXPECT_EQ(p.reported.passed, want["counts"]["passed"].get<int>()) << what;
  }
}

class GtestFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(GtestFixture, ParsersAgreeWithGoogleTest) {
  const std::string name = GetParam();
  const fs::path dir = kGtestFixtures / name;
  const json want = load(dir / (name + ".expected.json"));
  const GtestContext ctx{want["program"], want["source_root"]};
  const fs::path log = kGtestFixtures / want["log"].get<std::string>();
  const fs::path xml =
      want["xml"].is_string() ? kGtestFixtures / want["xml"].get<std::string>() : dir / "none.xml";

  LineReader lines(log);
  check(parse_gtest_text(lines, ctx), want, Source::kText, name + " (log)");
  std::optional<ParsedFile> from_xml = parse_gtest_xml(xml, ctx);
  EXPECT_EQ(from_xml.has_value(), want["xml"].is_string()) << name;
  if (from_xml) check(*from_xml, want, Source::kXml, name + " (xml)");
  check(parse_gtest_results(xml, log, ctx), want, from_xml ? Source::kBoth : Source::kText,
        name + " (xml + log)");
}

INSTANTIATE_TEST_SUITE_P(RealOutput, GtestFixture, ::testing::ValuesIn(gtest_fixtures()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(GtestFixtures, CoverWhatTheyAreMeantTo) {
  std::map<std::string, json> all;
  for (const std::string& name : gtest_fixtures()) {
    all[name] = load(kGtestFixtures / name / (name + ".expected.json"));
  }
  ASSERT_GE(all.size(), 12U);
  EXPECT_EQ(all["gt_segfault"]["exit"]["signal_name"], "SIGSEGV");
  EXPECT_TRUE(all["gt_segfault"]["xml"].is_null());
  EXPECT_EQ(all["gt_timeout"]["file_status"], "timeout");
  EXPECT_EQ(all["gt_fixtures"]["suite_failures"].size(), 2U);
  EXPECT_EQ(all["gt_environment"]["environment_failures"].size(), 2U);
  EXPECT_EQ(all["gt_outcomes"]["disabled"].size(), 2U);
  EXPECT_EQ(all["gt_empty"]["file_status"], "no_tests");
  // The two shards of gt_params hold its tests between them.
  EXPECT_EQ(
      all["gt_params_shard_1_of_2"]["cases"].size() + all["gt_params_shard_2_of_2"]["cases"].size(),
      all["gt_params"]["cases"].size());
}

// ---- hand-made documents ----

constexpr const char* kXmlHead = R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="1" disabled="1" errors="0" time="0.004" name="AllTests">
)";

TEST(GtestXml, NamesPathsAndStatuses) {
  TempDir dir;
  write_file(dir / "x.xml", std::string(kXmlHead) + R"(
  <testsuite name="Math" tests="3" failures="1" disabled="1" skipped="0" errors="0">
    <testcase name="Adds" file="/proj/src/math_test.cpp" line="4" status="run" result="completed" time="0.002" classname="Math" />
    <testcase name="Fails" file="/proj/src/math_test.cpp" line="6" status="run" result="completed" time="0.001" classname="Math">
      <failure message="/usr/include/helper.h:9&#x0A;Failed&#x0A;in a helper" type=""><![CDATA[/usr/include/helper.h:9
Failed
in a helper]]></failure>
      <failure message="/proj/src/math_test.cpp:8&#x0A;Value of: x" type=""><![CDATA[/proj/src/math_test.cpp:8
Value of: x]]></failure>
    </testcase>
    <testcase name="DISABLED_Later" file="/proj/src/math_test.cpp" line="10" status="notrun" result="suppressed" time="0" classname="Math" />
  </testsuite>
</testsuites>)");
  auto p = parse_gtest_xml(dir / "x.xml", GtestContext{"ops.math_test", "/proj"});
  ASSERT_TRUE(p);
  ASSERT_EQ(p->cases.size(), 2U);
  const TestCase& adds = p->cases[0];
  EXPECT_EQ(adds.classname, "ops.math_test.Math");
  EXPECT_EQ(adds.name, "Adds");
  EXPECT_EQ(adds.status, CaseStatus::kPassed);
  EXPECT_DOUBLE_EQ(adds.duration_s, 0.002);
  EXPECT_EQ(adds.source.path, "src/math_test.cpp");
  EXPECT_EQ(adds.source.line, 4);
  const TestCase& fails = p->cases[1];
  EXPECT_EQ(fails.status, CaseStatus::kFailed);
  EXPECT_EQ(fails.message, "in a helper");
  // The first failure's place, outside the project: kept absolute.
  EXPECT_EQ(fails.source.path, "/usr/include/helper.h");
  EXPECT_EQ(fails.source.line, 9);
  EXPECT_EQ(fails.traceback,
            "/usr/include/helper.h:9: Failure\nFailed\nin a helper\n"
            "/proj/src/math_test.cpp:8: Failure\nValue of: x");
  EXPECT_EQ(p->reported.ran, 2);
  EXPECT_EQ(p->reported.failed, 1);
  EXPECT_EQ(p->reported.passed, 1);
}

TEST(GtestXml, UnknownFileFallsBackToTheTestsPlaceAndSuiteFailuresBecomeErrors) {
  TempDir dir;
  write_file(dir / "x.xml", std::string(kXmlHead) + R"(
  <testsuite name="T" tests="1" failures="1" disabled="0" skipped="0" errors="0">
    <testcase name="Throws" file="rel/t.cpp" line="3" status="run" result="completed" time="0" classname="T">
      <failure message="unknown file&#x0A;C++ exception with description &quot;x&quot; thrown in the test body." type="" />
    </testcase>
    <testcase name="" status="run" result="completed" classname="T" time="0">
      <failure message="rel/t.cpp:1&#x0A;Failed&#x0A;suite set-up" type="" />
    </testcase>
  </testsuite>
  <testsuite name="NonTestSuiteFailure" tests="1" failures="1" disabled="0" skipped="0" errors="0">
    <testcase name="" status="run" result="completed" classname="" time="0">
      <failure message="env.cpp:2&#x0A;Failed&#x0A;no device" type=""><![CDATA[env.cpp:2
Failed
no device]]></failure>
    </testcase>
  </testsuite>
</testsuites>)");
  auto p = parse_gtest_xml(dir / "x.xml", GtestContext{"t", "/proj"});
  ASSERT_TRUE(p);
  ASSERT_EQ(p->cases.size(), 3U);
  EXPECT_EQ(p->cases[0].message, R"(C++ exception with description "x" thrown in the test body.)");
  EXPECT_EQ(p->cases[0].source.path, "rel/t.cpp");  // relative paths are kept
  EXPECT_EQ(p->cases[0].source.line, 3);
  EXPECT_EQ(p->cases[1].classname, "t.T");
  EXPECT_EQ(p->cases[1].name, kGtestSuiteFixture);
  EXPECT_EQ(p->cases[1].status, CaseStatus::kError);
  EXPECT_EQ(p->cases[1].message, "suite set-up");
  EXPECT_EQ(p->cases[2].classname, "t");
  EXPECT_EQ(p->cases[2].name, kGtestEnvironment);
  EXPECT_EQ(p->cases[2].message, "no device");
  EXPECT_EQ(p->cases[2].source.path, "env.cpp");
}

TEST(GtestXml, MissingEmptyTruncatedOrForeignXmlIsNullopt) {
  TempDir dir;
  GtestContext ctx;
  EXPECT_FALSE(parse_gtest_xml(dir / "missing.xml", ctx));
  write_file(dir / "empty.xml", "  \n");
  EXPECT_FALSE(parse_gtest_xml(dir / "empty.xml", ctx));
  write_file(dir / "cut.xml", std::string(kXmlHead) + "<testsuite name=\"A\"><testcase name=");
  EXPECT_FALSE(parse_gtest_xml(dir / "cut.xml", ctx));
  write_file(dir / "other.xml", "<html><body/></html>");
  EXPECT_FALSE(parse_gtest_xml(dir / "other.xml", ctx));
  write_file(dir / "none.xml", "<testsuites tests=\"0\"/>");
  auto none = parse_gtest_xml(dir / "none.xml", ctx);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->cases.empty());
  EXPECT_EQ(none->reported.ran, 0);
}

TEST(GtestXml, UnreadableFileThrows) {
  TempDir dir;
  fs::create_directories(dir / "a.xml");  // a folder: open() works, read() fails
  EXPECT_THROW(parse_gtest_xml(dir / "a.xml", GtestContext{}), RuntimeError);
}

TEST(GtestResults, XmlRefinedByTheLogElseTheLog) {
  TempDir dir;
  write_file(dir / "x.xml", std::string(kXmlHead) + R"(
  <testsuite name="S" tests="1" failures="0" disabled="0" skipped="0" errors="0">
    <testcase name="A" file="/p/s.cpp" line="3" status="run" result="completed" time="0" classname="S" />
  </testsuite>
</testsuites>)");
  const std::string log =
      "[==========] Running 1 test from 1 test suite.\n"
      "[----------] Global test environment set-up.\n"
      "[----------] 1 test from S\n"
      "[ RUN      ] S.A\n"
      "[       OK ] S.A (0 ms)\n"
      "/p/s.cpp:9: Failure\nFailed\nleak\n"
      "[----------] 1 test from S (0 ms total)\n\n"
      "[----------] Global test environment tear-down\n"
      "[==========] 1 test from 1 test suite ran. (0 ms total)\n"
      "[  PASSED  ] 1 test.\n"
      "[  FAILED  ] 0 tests, listed below:\n\n 0 FAILED TESTS\n"
      "[  FAILED  ] S: SetUpTestSuite or TearDownTestSuite\n\n 1 FAILED TEST SUITE\n";
  write_file(dir / "x.log", log);
  GtestContext ctx{"s_test", "/p"};
  ParsedFile both = parse_gtest_results(dir / "x.xml", dir / "x.log", ctx);
  ASSERT_EQ(both.cases.size(), 2U);
  EXPECT_EQ(both.cases[0].source.path, "s.cpp");  // from the XML: the test's place
  EXPECT_EQ(both.cases[1].name, kGtestTearDownTestSuite);
  EXPECT_EQ(both.cases[1].message, "leak");
  EXPECT_EQ(both.reported.errors, 1);

  // Without the XML: the log alone (no place for a passing test).
  ParsedFile text = parse_gtest_results(dir / "none.xml", dir / "x.log", ctx);
  ASSERT_EQ(text.cases.size(), 2U);
  EXPECT_EQ(text.cases[0].source.line, 0);
  // A good XML without a log is fine; neither is an error.
  EXPECT_EQ(parse_gtest_results(dir / "x.xml", dir / "none.log", ctx).cases.size(), 1U);
  EXPECT_THROW(parse_gtest_results(dir / "none.xml", dir / "none.log", ctx), RuntimeError);
}

}  // namespace
}  // namespace devshim
