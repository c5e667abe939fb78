// Parser of pytest's terminal output (`pytest -v -ra`, or `-rA`), the fallback when the JUnit XML
// is missing (the process crashed or timed out before pytest wrote it), and pytest's naming of
// node ids shared with the JUnit parser (parsers/pytest_junit.h). What a failure report says is
// parsers/pytest_failure.h's (included here for the callers of both).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "parsers/line_reader.h"
#include "parsers/pytest_failure.h"
#include "parsers/test_result.h"

namespace devshim {

/// A pytest node id named as pytest's JUnit XML names it (`_pytest.junitxml.mangle_test_address`):
/// "tests/test_x.py::TestC::test_y[a::b-1]" → file "tests/test_x.py", classname
/// "tests.test_x.TestC", name "test_y[a::b-1]". The parametrize id is split off at the first "["
/// before "::" is looked for, so ids may hold "::", spaces and brackets. A node id without "::"
/// (a module, as in a collection error) gives an empty classname and name "tests.test_x".
struct PytestName {
  std::string file;
  std::string classname;
  std::string name;
};
PytestName split_pytest_nodeid(std::string_view nodeid);

/// Reads the whole output of `pytest -v -ra` (the runner's) or `-rA` (older runs, other runners)
/// for one test file (any number of files works too):
/// - progress lines `tests/x.py::Class::test_y[id] PASSED   [ 50%]` (FAILED, ERROR, SKIPPED
///   (reason), XFAIL (reason), XPASS (reason)), with or without the percentage, also when the
///   test's output (`-s`) sits between the node id and the verdict, on the same or later lines;
///   a test listed twice (call failed or passed, then ERROR at teardown) keeps the worse outcome
///   (failed > error > others); pytest 9 subtests (`SUBFAILED`) make their test failed;
/// - the ERRORS and FAILURES sections (`-rA`'s PASSES section is passed over): `____ ERROR at
///   setup of test_y ____` / `____ Class.test_y ____` blocks give traceback, exception, message
///   and the source line in the test file;
///   `ERROR collecting tests/x.py` blocks, `ERROR tests/x.py` and `Interrupted: N errors during
///   collection` set import_error (with the block as import_error_text);
/// - the short test summary (`FAILED id - msg`, `XFAIL id - reason`, `SKIPPED [n] path:line:
///   reason`, and `-rA`'s `PASSED id`), whose statuses win over the progress lines, and which
///   completes reasons the progress lines cut to the terminal width; a module skipped as a whole
///   (`collected 0 items / 1 skipped`) becomes one skipped case named like the JUnit XML does
///   (classname "", name "tests.test_x");
/// - the closing `== 1 failed, 2 passed, 1 skipped, 1 xfailed in 0.1s ==` line → reported (pytest
///   counts reports, not tests: a test that failed and errored in teardown counts twice).
/// Names follow split_pytest_nodeid, so a case here equals its JUnit XML counterpart in classname,
/// name and status (except a non-strict XPASS, a plain pass in xunit1 XML). A test whose node id
/// was printed without a verdict when the output stopped is `unfinished` (status error, its
/// output, e.g. a faulthandler dump, as traceback); when pytest's "!!! KeyboardInterrupt !!!" (or
/// "!!! _pytest.outcomes.Exit: reason !!!") banner came during it and the closing counts line
/// after, the session ended on that exception in that test (raised there, or a SIGINT): its
/// exception, message and line are the banner's and the crash line's under it, and
/// `unfinished_ended_session` is set. A banner-like line of a test that then gets a verdict, or
/// with no closing counts after it, is output. Bounded memory: the cases and their capped
/// tracebacks, whatever the log size. Never throws on bad input.
ParsedFile parse_pytest_text(LineReader& lines);

}  // namespace devshim
