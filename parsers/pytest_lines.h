// The shapes of the lines of pytest's terminal output that the log parser
// (parsers/pytest_text.h) reads: verdicts, node ids, section and block titles, the closing counts.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "parsers/test_result.h"

namespace devshim::pytest_lines {

/// An ASCII digit.
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// The status a verdict word names ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS").
std::optional<CaseStatus> verdict_status(std::string_view word);

/// A verdict at the end of a line (trailing_verdict).
struct Verdict {
  CaseStatus status = CaseStatus::kPassed;
  std::string_view reason;
  std::string_view before;  ///< the text before the verdict (node id, output)
  bool progress = false;    ///< a "[ 50%]" / "[ 3/30]" column followed
};

/// The verdict pytest -v prints at the end of a test's line: "PASSED", "SKIPPED (reason)", with an
/// optional progress column; glued to output printed by the test when capture is off.
std::optional<Verdict> trailing_verdict(std::string_view line);

/// End of a node id that starts s, scanning from `from` (after the first "::"): the first space
/// outside brackets, or s.size(); npos when a bracket stays open to the end.
std::size_t nodeid_end(std::string_view s, std::size_t from);

/// Where the "::" after the file path is, when line starts with a pytest node id of a .py file.
std::optional<std::size_t> nodeid_start(std::string_view line);

/// "TestC::test_y[a::b]" part of a node id as pytest titles its report: "TestC.test_y[a::b]".
std::string head_line(std::string_view nodeid);

/// "tests/test_x.py" → "tests.test_x" (pytest's mangling of the file part of a node id).
std::string dotted_module(std::string_view path);

/// "8 failed, 14 passed, 4 skipped, 2 xfailed, 1 xpassed, 3 errors in 0.11s" / "no tests ran in
/// 0.01s" (the closing line's title) → counts; false when the title is something else.
bool parse_counts(std::string_view title, ReportedCounts& out);

/// "=====  title  =====" → title.
std::optional<std::string_view> equals_title(std::string_view line);

/// "_____ title _____" → title; not the "_ _ _ _" separator between frames.
std::optional<std::string_view> block_title(std::string_view line);

}  // namespace devshim::pytest_lines
