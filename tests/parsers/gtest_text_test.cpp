// The GoogleTest console parser on hand-made output: what real output does not show often (glued
// and fake verdicts, crashes after failures, summaries without failure text), garbage, and the
// helpers shared with the XML reader. Real output: gtest_xml_test.cpp (fixtures/gtest).
#include "parsers/gtest_text.h"

#include <gtest/gtest.h>

#include <string>

namespace devshim {
namespace {

ParsedFile parse(const std::string& log, const GtestContext& ctx = {"bin", "/p"}) {
  LineReader lines = LineReader::from_string(log);
  return parse_gtest_text(lines, ctx);
}

constexpr const char* kHead =
    "Running main() from ./googletest/src/gtest_main.cc\n"
    "[==========] Running 3 tests from 1 test suite.\n"
    "[----------] Global test environment set-up.\n"
    "[----------] 3 tests from S\n";

TEST(GtestText, VerdictsNamesAndDurations) {
  ParsedFile p = parse(std::string(kHead) +
                       "[ RUN      ] S.Ok\n[       OK ] S.Ok (12 ms)\n"
                       "[ RUN      ] Inst/P.Even/1\n"
                       "/p/src/p.cpp:14: Failure\nExpected equality of these values:\n"
                       "  GetParam() % 2\n    Which is: 1\n  0\n"
                       "[  FAILED  ] Inst/P.Even/1, where GetParam() = (1, 2) (3 ms)\n"
                       "[ RUN      ] Ty/0.Skip\n/elsewhere/t.cpp:7: Skipped\nno GPU\n\n"
                       "[  SKIPPED ] Ty/0.Skip (0 ms)\n");
  ASSERT_EQ(p.cases.size(), 3U);
  EXPECT_EQ(p.cases[0].classname, "bin.S");
  EXPECT_EQ(p.cases[0].name, "Ok");
  EXPECT_EQ(p.cases[0].status, CaseStatus::kPassed);
  EXPECT_DOUBLE_EQ(p.cases[0].duration_s, 0.012);
  EXPECT_EQ(p.cases[0].source.line, 0);
  const TestCase& even = p.cases[1];
  EXPECT_EQ(even.classname, "bin.Inst/P");
  EXPECT_EQ(even.name, "Even/1");
  EXPECT_EQ(even.status, CaseStatus::kFailed);
  EXPECT_DOUBLE_EQ(even.duration_s, 0.003);
  EXPECT_EQ(even.message, "Expected equality of these values: GetParam() % 2 Which is: 1 0");
  EXPECT_EQ(even.source.path, "src/p.cpp");
  EXPECT_EQ(even.source.line, 14);
  EXPECT_EQ(even.traceback,
            "/p/src/p.cpp:14: Failure\nExpected equality of these values:\n  GetParam() % 2\n"
            "    Which is: 1\n  0");
  EXPECT_EQ(p.cases[2].status, CaseStatus::kSkipped);
  EXPECT_EQ(p.cases[2].message, "no GPU");
  EXPECT_EQ(p.cases[2].source.path, "/elsewhere/t.cpp");
  EXPECT_FALSE(p.unfinished);
  EXPECT_FALSE(p.reported.present);
}

TEST(GtestText, GluedFakeAndRepeatedVerdicts) {
  ParsedFile p = parse(std::string(kHead) +
                       // output without a newline, then GoogleTest's verdict on the same line
                       "[ RUN      ] S.Glued\npartial[       OK ] S.Glued (0 ms)\n"
                       // markers printed by the test itself
                       "[ RUN      ] S.Fake\n[ RUN      ] Other.T\n[       OK ] Other.T (0 ms)\n"
                       "[       OK ] S.Fake (0 ms)\n"
                       "/p/a.cpp:3: Failure\nreal failure after a fake OK\n"
                       "[  FAILED  ] S.Fake (1 ms)\n"
                       "[ RUN      ] S.Last\n[       OK ] S.Last (0 ms)\n"
                       "[----------] 3 tests from S (1 ms total)\n");
  ASSERT_EQ(p.cases.size(), 3U);
  EXPECT_EQ(p.cases[0].name, "Glued");
  EXPECT_EQ(p.cases[0].status, CaseStatus::kPassed);
  EXPECT_EQ(p.cases[1].name, "Fake");
  EXPECT_EQ(p.cases[1].status, CaseStatus::kFailed);  // the later verdict wins
  EXPECT_EQ(p.cases[1].message, "real failure after a fake OK");
  EXPECT_EQ(p.cases[1].source.path, "a.cpp");
  EXPECT_DOUBLE_EQ(p.cases[1].duration_s, 0.001);
  EXPECT_EQ(p.cases[2].name, "Last");
}

TEST(GtestText, TheTestRunningWhenTheOutputStopsIsUnfinished) {
  std::string log = std::string(kHead) + "[ RUN      ] S.First\n[       OK ] S.First (0 ms)\n" +
                    "[ RUN      ] S.Crashes\n/p/c.cpp:5: Failure\nValue of: ok\nbefore the crash\n";
  for (int i = 0; i < 100; ++i) log += "noise " + std::to_string(i) + "\n";
  log += "last words";  // no newline: the process died
  ParsedFile p = parse(log);
  ASSERT_EQ(p.cases.size(), 1U);
  ASSERT_TRUE(p.unfinished);
  EXPECT_EQ(p.unfinished->classname, "bin.S");
  EXPECT_EQ(p.unfinished->name, "Crashes");
  EXPECT_EQ(p.unfinished->status, CaseStatus::kError);
  EXPECT_EQ(p.unfinished->message, "");  // the runner says how the process ended
  EXPECT_EQ(p.unfinished->source.path, "c.cpp");
  EXPECT_EQ(p.unfinished->source.line, 5);
  // Its last 60 lines of output.
  EXPECT_EQ(p.unfinished->traceback.find("noise 41\n"), 0U) << p.unfinished->traceback;
  EXPECT_TRUE(p.unfinished->traceback.ends_with("noise 99\nlast words"));
}

constexpr const char* kSuiteFailures =
    "[==========] Running 2 tests from 2 test suites.\n"
    "[----------] Global test environment set-up.\n"
    "/p/env.cpp:3: Failure\nFailed\nno device\n"
    "[----------] 1 test from Up\n"
    "/p/up.cpp:7: Failure\nFailed\nset-up broke\n"
    "[ RUN      ] Up.T\n/p/up.cpp:9: Skipped\n\n[  SKIPPED ] Up.T (0 ms)\n"
    "[----------] 1 test from Up (0 ms total)\n\n"
    "[----------] 1 test from Down\n"
    "[ RUN      ] Down.T\n[       OK ] Down.T (0 ms)\n"
    "/p/down.cpp:4: Failure\nFailed\ntear-down broke\n"
    "[----------] 1 test from Down (0 ms total)\n\n"
    "[----------] Global test environment tear-down\n"
    "/p/env.cpp:4: Failure\nFailed\nstill no device\n"
    "[==========] 2 tests from 2 test suites ran. (0 ms total)\n"
    "[  PASSED  ] 1 test.\n"
    "[  SKIPPED ] 1 test, listed below:\n[  SKIPPED ] Up.T\n"
    "[  FAILED  ] 0 tests, listed below:\n\n 0 FAILED TESTS\n";

TEST(GtestText, FailuresOutsideTestsAreErrorCasesNamedAfterWhereTheyHappened) {
  ParsedFile p = parse(std::string(kSuiteFailures) +
                       "[  FAILED  ] Up: SetUpTestSuite or TearDownTestSuite\n"
                       "[  FAILED  ] Down: SetUpTestSuite or TearDownTestSuite\n"
                       "[  FAILED  ] Gone: SetUpTestSuite or TearDownTestSuite\n\n"
                       " 3 FAILED TEST SUITES\n  YOU HAVE 1 DISABLED TEST\n\n");
  std::vector<std::string> got;
  for (const TestCase& c : p.cases) {
    got.push_back(c.classname + "::" + c.name + "=" + std::string(to_string(c.status)) + ":" +
                  c.message + "@" + c.source.path + ":" + std::to_string(c.source.line));
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "bin.Up::T=skipped:@up.cpp:9",
                     "bin.Down::T=passed:@:0",
                     "bin::Environment::SetUp=error:no device@env.cpp:3",
                     "bin.Up::SetUpTestSuite=error:set-up broke@up.cpp:7",
                     "bin.Down::TearDownTestSuite=error:tear-down broke@down.cpp:4",
                     "bin::Environment::TearDown=error:still no device@env.cpp:4",
                     // listed by the summary, its text not seen
                     "bin.Gone::SetUpTestSuite or TearDownTestSuite=error:@:0",
                 }));
  EXPECT_TRUE(p.reported.present);
  EXPECT_EQ(p.reported.ran, 2);
  EXPECT_EQ(p.reported.passed, 1);
  EXPECT_EQ(p.reported.skipped, 1);
  EXPECT_EQ(p.reported.failed, 0);
  EXPECT_EQ(p.reported.errors, 3);
}

TEST(GtestText, ASummaryThatListsNoFailedSuiteDropsLookalikes) {
  // The summary names no failed suite: the failure-like text after Down.T was not GoogleTest's.
  ParsedFile p = parse(kSuiteFailures);
  for (const TestCase& c : p.cases) {
    EXPECT_EQ(c.name.find("TestSuite"), std::string::npos) << c.name;
  }
  EXPECT_EQ(p.cases.size(), 4U);  // two tests, the environment's set-up and tear-down
}

TEST(GtestText, EmptyRunsGarbageAndCutLines) {
  ParsedFile empty = parse(
      "[==========] Running 0 tests from 0 test suites.\n"
      "[==========] 0 tests from 0 test suites ran. (0 ms total)\n[  PASSED  ] 0 tests.\n");
  EXPECT_TRUE(empty.cases.empty());
  EXPECT_TRUE(empty.reported.present);
  EXPECT_EQ(empty.reported.ran, 0);

  ParsedFile nothing = parse("");
  EXPECT_TRUE(nothing.cases.empty());
  EXPECT_FALSE(nothing.reported.present);

  std::string garbage = "[ RUN      ]\n[       OK ] \n[  FAILED  ] (ms)\n: Failure\n:7: Failure\n";
  garbage += std::string(1 << 20, '[') + "\n\xff\xfe[ RUN      ] \xff.\xfe\n";
  ParsedFile g;
  EXPECT_NO_THROW(g = parse(garbage));
  for (const TestCase& c : g.cases) EXPECT_FALSE(c.name.empty());

  // A verdict on a line longer than the reader's limit is lost; the test stays unfinished.
  std::string long_line = std::string(kHead) + "[ RUN      ] S.Long\n" +
                          std::string(LineReader::kDefaultMaxLine + 10, 'x') +
                          "[       OK ] S.Long (0 ms)\n";
  ParsedFile l = parse(long_line);
  EXPECT_TRUE(l.unfinished);
}

TEST(GtestHelpers, Messages) {
  EXPECT_EQ(gtest_message("Failed\nexplicit"), "explicit");
  EXPECT_EQ(gtest_message("Failed"), "Failed");
  EXPECT_EQ(gtest_message("\n  a\t\tb  \n\n   c  "), "a b");  // the first line
  // A header ending in ':' and the indented lines under it; the user's text after them is not.
  EXPECT_EQ(gtest_message("Expected equality of these values:\n  f(x)\n    Which is: 0.79\n"
                          "  1e-05\nuser text"),
            "Expected equality of these values: f(x) Which is: 0.79 1e-05");
  EXPECT_EQ(gtest_message("Value of: ok\n  Actual: false\nExpected: true"), "Value of: ok");
  // LibTorch's exceptions carry a backtrace after their first line.
  EXPECT_EQ(gtest_message("C++ exception with description \"PyTorch is not linked with support for "
                          "cuda devices\nException raised from getDeviceGuardImpl at /x.h:416 "
                          "(most recent call first):\nframe #0: c10::Error::Error() + 0x9d\n\" "
                          "thrown in the test body."),
            "C++ exception with description \"PyTorch is not linked with support for cuda devices");
  EXPECT_EQ(gtest_message(""), "");
  EXPECT_EQ(gtest_message(std::string(5000, 'y')).size(), 2048U);
  EXPECT_EQ(gtest_message(std::string(3000, 'y') + "\n" + std::string(3000, 'z')).size(), 2048U);
}

TEST(GtestHelpers, PartsLocationsAndNames) {
  GtestPart p = split_gtest_part("/a/b.cpp:12\nline 1\nline 2\n");
  EXPECT_EQ(p.path, "/a/b.cpp");
  EXPECT_EQ(p.line, 12);
  EXPECT_EQ(p.body, "line 1\nline 2");
  GtestPart u = split_gtest_part("unknown file\nC++ exception");
  EXPECT_EQ(u.path, "unknown file");
  EXPECT_EQ(u.line, 0);
  EXPECT_EQ(gtest_traceback({u, p}),
            "unknown file: Failure\nC++ exception\n/a/b.cpp:12: Failure\n"
            "line 1\nline 2");

  GtestContext ctx{"ops.t", "/a"};
  EXPECT_EQ(gtest_location(ctx, "/a/b.cpp", 3)->path, "b.cpp");
  EXPECT_EQ(gtest_location(ctx, "/a/../a/c/d.cpp", 3)->path, "c/d.cpp");
  EXPECT_EQ(gtest_location(ctx, "/ab/x.cpp", 3)->path, "/ab/x.cpp");
  EXPECT_EQ(gtest_location(ctx, "x.cpp", 0)->path, "x.cpp");
  EXPECT_FALSE(gtest_location(ctx, "unknown file", 0));
  EXPECT_FALSE(gtest_location(ctx, "", 0));
  EXPECT_EQ(gtest_location(GtestContext{}, "/a/b.cpp", 1)->path, "/a/b.cpp");

  EXPECT_EQ(gtest_classname(ctx, "Suite"), "ops.t.Suite");
  EXPECT_EQ(gtest_classname(ctx, ""), "ops.t");
  EXPECT_EQ(gtest_classname(GtestContext{}, "Suite"), "Suite");
}

}  // namespace
}  // namespace devshim
