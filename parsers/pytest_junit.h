// Parser of the JUnit XML that pytest writes with `--junitxml=FILE -o junit_family=xunit1`, and
// the entry point that reads a pytest test file's results from its XML and its log together.
#pragma once

#include <filesystem>
#include <optional>

#include "parsers/test_result.h"

namespace devshim {

/// Reads pytest's JUnit XML (`<testsuites><testsuite tests failures errors skipped><testcase
/// classname name file line time>` with `<failure>`, `<error>`, `<skipped>` children).
/// Returns nullopt when the file is missing, empty, not well-formed (the process died while
/// writing it) or not a JUnit document, so that the caller falls back to the log
/// (parse_pytest_text). Throws RuntimeError when it exists but cannot be read.
/// - status: `<failure>` → failed (also a strict XPASS: "[XPASS(strict)] reason"); `<error>` →
///   error (setup/teardown); `<skipped type="pytest.xfail">` → xfailed; other `<skipped>` →
///   skipped; none → passed. A non-strict XPASS is a plain passing testcase in xunit1 (nothing
///   marks it); parse_pytest_results recovers it from the log. A test pytest lists twice (call
///   failed, then error in teardown) is one case keeping the worse outcome (failed > error >
///   others) and that outcome's details, its times added;
/// - exception and message from the traceback text (summarize_pytest_failure), else from the
///   `message` attribute; traceback = the element text (capped like the log's); source = the
///   deepest frame in the test file, else `file` and `line` + 1 (pytest writes it 0-based: the
///   first line of the function, its decorators included); duration = `time`;
/// - a collection error (classname "", `<error message="collection failure">`) sets import_error
///   and import_error_text, and is no case; a module skipped as a whole (classname "",
///   `<skipped message="collection skipped">`) is one skipped case named after the module;
/// - reported = the testsuite attributes summed, with xfailed split off from skipped (the XML
///   counts xfails as skipped) and passed = tests - failures - errors - skipped.
/// The testcase without a name that pytest writes when interrupted (KeyboardInterrupt) is skipped.
std::optional<ParsedFile> parse_pytest_junit(const std::filesystem::path& xml);

/// The results of one pytest test file: the JUnit XML when it is complete, refined by the log
/// (a passing testcase the log shows as XPASS becomes xpassed with its reason; the log's test
/// that got no verdict becomes `unfinished`; the log's closing counts line, which tells xfailed
/// and xpassed apart, replaces the XML's counts), else the log alone (parse_pytest_text).
/// Throws RuntimeError when neither file can be read (a missing log with a good XML is fine).
ParsedFile parse_pytest_results(const std::filesystem::path& xml, const std::filesystem::path& log);

}  // namespace devshim
