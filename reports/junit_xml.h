// junit.xml: for CI test tabs. One <testsuite> per test file.
#pragma once

#include <string>

#include "reports/report.h"

namespace devshim {

/// <testsuites name tests failures errors skipped time> with one <testsuite name=file tests
/// failures errors skipped time> per file and <testcase classname name time file line> with
/// <failure message type>traceback</failure> (failed, xpassed counted as passed), <error> (error,
/// culprits), <skipped message> (skipped, xfailed). A file that produced no case but did not
/// pass (import error, crash before any test) gets one <error> testcase named after the file
/// (its FileError's message, type and traceback). A differential run's lost tests are <error
/// type="lost"> testcases of their file's suite.
/// Characters not allowed in XML 1.0 are removed; everything else is escaped by pugixml.
std::string render_junit(const Report& report);

/// text without the characters XML 1.0 forbids (C0 controls but tab/LF/CR, U+FFFE, U+FFFF).
std::string xml_safe(const std::string& text);

}  // namespace devshim
