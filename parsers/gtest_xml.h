// Parser of the XML that a GoogleTest binary writes with `--gtest_output=xml:FILE`, and the entry
// point that reads a GoogleTest binary's results from its XML and its console output together.
#pragma once

#include <filesystem>
#include <optional>

#include "parsers/gtest_text.h"
#include "parsers/test_result.h"

namespace devshim {

/// Reads GoogleTest's XML (`<testsuites><testsuite name tests failures disabled skipped><testcase
/// name classname file line status result time>` with `<failure message>` and `<skipped
/// message>` children; GoogleTest ≥ 1.11 writes file, line and result). Returns nullopt when the
/// file is missing, empty, not well-formed or not such a document (GoogleTest writes it only when
/// the program ends, so a crashed or killed binary leaves none), so that the caller falls back to
/// the console output (parse_gtest_text). Throws RuntimeError when it exists but cannot be read.
/// - one case per `<testcase>` that ran: classname = gtest_classname(ctx, suite), name = the
///   test's name as GoogleTest spells it ("Even/0" of "Numbers/EvenTest"); a `status="notrun"`
///   testcase (a DISABLED_ test) is no case;
/// - status: any `<failure>` (or `<error>`) → failed, even after a GTEST_SKIP; else
///   `result="skipped"` or `<skipped>` → skipped; else passed;
/// - failed: message = gtest_message of the first failure, traceback = every failure in the
///   console's form (gtest_traceback), source = the first failure's file and line, else the
///   testcase's `file` and `line`; skipped: the skip's message and place; passed: the testcase's
///   file and line. Paths go through gtest_location (relative to the project root under it);
/// - duration = `time`;
/// - the `NonTestSuiteFailure` suite (failures of the global test environment) becomes one error
///   case named kGtestEnvironment, and a testcase without a name that holds failures one named
///   kGtestSuiteFixture;
/// - reported: over the test suites, ran = tests − disabled, failed = failures, skipped = skipped,
///   passed = ran − failed − skipped (the XML does not count suite-level failures: errors = 0).
std::optional<ParsedFile> parse_gtest_xml(const std::filesystem::path& xml,
                                          const GtestContext& ctx);

/// The results of one GoogleTest binary: the XML when it is complete, refined by the console
/// output (which alone shows failures in SetUpTestSuite / TearDownTestSuite, tells the global
/// environment's set-up from its tear-down, and counts the failed test suites: its error cases
/// and its closing counts replace the XML's), else the console output alone (parse_gtest_text,
/// with the test that was running when the output stopped as `unfinished`). Throws RuntimeError
/// when neither file can be read (a missing log with a good XML is fine).
ParsedFile parse_gtest_results(const std::filesystem::path& xml, const std::filesystem::path& log,
                               const GtestContext& ctx);

}  // namespace devshim
