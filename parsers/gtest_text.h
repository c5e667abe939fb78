// Parser of GoogleTest's console output, the fallback when its XML is missing (the process crashed
// or was killed: GoogleTest writes the XML only when the program ends), and the naming and
// failure-text helpers shared with the XML reader (parsers/gtest_xml.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/line_reader.h"
#include "parsers/test_result.h"

namespace devshim {

/// How the results of one GoogleTest binary are named and located.
struct GtestContext {
  /// Put before the test suite's name, with a ".", to make a case's classname: the binary's path
  /// in the tests folder, dotted ("math_test", "ops/math_test" → "ops.math_test"), so that
  /// MathTest's cases are "math_test.MathTest". Empty: the suite's name alone.
  std::string classname_prefix;
  /// Absolute project root. A source path under it becomes relative to it ("src/math_test.cpp");
  /// others are kept as GoogleTest printed them. Empty: every path is kept.
  std::string project_root;
};

/// Names of the cases that hold failures outside a test body (their status is `error`, which no
/// test of a GoogleTest binary has otherwise): a test suite's SetUpTestSuite / TearDownTestSuite
/// (classname = the suite's), and the global test environment's SetUp / TearDown (classname = the
/// prefix alone). kGtestSuiteFixture and kGtestEnvironment are used when the output does not tell
/// set-up from tear-down (GoogleTest's summary line; the XML's NonTestSuiteFailure).
inline constexpr std::string_view kGtestSetUpTestSuite = "SetUpTestSuite";
inline constexpr std::string_view kGtestTearDownTestSuite = "TearDownTestSuite";
inline constexpr std::string_view kGtestSuiteFixture = "SetUpTestSuite or TearDownTestSuite";
inline constexpr std::string_view kGtestEnvironmentSetUp = "Environment::SetUp";
inline constexpr std::string_view kGtestEnvironmentTearDown = "Environment::TearDown";
inline constexpr std::string_view kGtestEnvironment = "Environment";

/// "MathTest" → "math_test.MathTest" (the prefix alone for an empty suite name).
std::string gtest_classname(const GtestContext& ctx, std::string_view suite);

/// A source location GoogleTest printed ("/src/x.cpp" and 42), relative to the project root when
/// it lies under it (lexically); nullopt for "unknown file" or an empty path.
std::optional<SourceLocation> gtest_location(const GtestContext& ctx, std::string_view path,
                                             int line);

/// One failure or skip as GoogleTest reports it: "path:line: Failure" (console) or "path:line"
/// (XML) and the message lines under it.
struct GtestPart {
  std::string path;  ///< as printed; "unknown file" when GoogleTest knows none
  int line = 0;      ///< 0 when none was printed
  std::string body;  ///< the message, lines separated by "\n"
};

/// Splits the XML form of a failure or skip ("path:line\nmessage…", "unknown file\nmessage…").
GtestPart split_gtest_part(std::string_view text);

/// The message of a failure or skip, one line of at most 2 KiB: the first line of GoogleTest's
/// message; after the "Failed" line of FAIL() / ADD_FAILURE(), the user's first line; a header
/// ending in ':' with the indented lines under it, joined by single spaces ("Expected equality
/// of these values:\n  a\n    Which is: 1\n  b\nuser text" → "Expected equality of these
/// values: a Which is: 1 b"). A C++ exception's description stops at its first line, before
/// LibTorch's backtrace.
std::string gtest_message(std::string_view body);

/// Parts as the console prints them ("path:line: Failure\nmessage"), one after the other, at
/// most about 64 KiB: the stored traceback of a case.
std::string gtest_traceback(const std::vector<GtestPart>& parts, bool skip = false);

/// Reads the whole console output of one GoogleTest binary (stdout and stderr together), as it
/// prints it by default (not --gtest_brief), streaming:
/// - `[ RUN      ] Suite.Name` starts a test; `[       OK ] Suite.Name (N ms)`, `[  FAILED  ]
///   Suite.Name[, where GetParam() = …] (N ms)` and `[  SKIPPED ] Suite.Name (N ms)` end it as
///   passed, failed or skipped, also when glued to the test's output printed without a newline.
///   Lines that look like markers while a test runs, but do not end that test, are its output;
///   a second verdict for the test that just ended replaces the first (the test printed a fake
///   one).
/// - `path:line: Failure` and `path:line: Skipped` blocks in a test give its message (the first
///   failure's), its traceback (every failure block) and its source (the first failure's place);
///   a skipped test gets its skip message and place.
/// - failure blocks between a suite's header and its first test (SetUpTestSuite), after its last
///   test (TearDownTestSuite), after "Global test environment set-up." (Environment::SetUp) or
///   "tear-down" (Environment::TearDown) become `error` cases with those names (kGtest* above).
///   When the summary was printed, a suite's blocks are kept only if the summary lists it as
///   failed (`[  FAILED  ] Suite: SetUpTestSuite or TearDownTestSuite`).
/// - reported: `[==========] N tests from M test suites ran.` (ran), `[  PASSED  ] N`,
///   `[  FAILED  ] N tests, listed below:`, `[  SKIPPED ] N …` and `N FAILED TEST SUITES` (errors).
/// - `[ DISABLED ]` lines are ignored: DISABLED_ tests are no cases (GoogleTest prints them for
///   the wrong shard in a sharded run, and counts them apart from its results).
/// A test that started and got no verdict is `unfinished` (status error): its last 60 lines of
/// output as traceback, the place of its first failure if it had one, and no message, so that the
/// runner says how the process ended. Names: classname = gtest_classname(ctx, Suite), name = the
/// rest of GoogleTest's full name ("Instance/Suite.Name/0" → "….Instance/Suite", "Name/0").
/// Durations come from "(N ms)". Bounded memory; never throws on bad input.
ParsedFile parse_gtest_text(LineReader& lines, const GtestContext& ctx);

}  // namespace devshim
