// Parser of `python -m unittest -v <file>` output (Python 3.8 to 3.13 formats).
#pragma once

#include <string_view>

#include "parsers/line_reader.h"
#include "parsers/test_result.h"

namespace devshim {

/// Reads the whole log from lines and returns every test's result:
/// - progress lines `test_x (pkg.mod.Class.test_x) ... ok|FAIL|ERROR|skipped 'r'|expected
///   failure|unexpected success`, the older `test_x (pkg.mod.Class)` form, docstring first lines
///   on their own line, output printed between a test's name and its verdict, subTests (each
///   failing subtest is a case named `test_x (i=1)`; a parent whose subtests failed gets no case
///   of its own, as unittest counts it);
/// - the `FAIL:` / `ERROR:` / `UNEXPECTED SUCCESS:` blocks, whose tracebacks give exception,
///   message, traceback and source location; blocks for class and module fixtures
///   (`setUpClass (pkg.mod.Class)`, `tearDownModule (pkg.mod)`) become cases of their own;
/// - "Failed to import test module" sets import_error;
/// - `Ran N tests` and `OK`/`FAILED (failures=F, errors=E, skipped=S, expected failures=X,
///   unexpected successes=U)` fill `reported`.
/// A test that started and got no verdict before the log ended is `unfinished` (with the last
/// lines of its output, e.g. a faulthandler dump, as its traceback).
/// test_file (relative to the project root, e.g. "tests/test_x.py") locates failures in the
/// test file's frames. Memory: the cases plus bounded text per case, whatever the log size.
ParsedFile parse_unittest_log(LineReader& lines, std::string_view test_file = {});

}  // namespace devshim
