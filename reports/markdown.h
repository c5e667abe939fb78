// report.md: GitHub-flavoured Markdown that also reads well in a terminal.
#pragma once

#include <string>
#include <string_view>

#include "reports/report.h"

namespace devshim {

/// The whole report. Text from tests is escaped so that it cannot break a table or inject
/// markup (md_cell), and tracebacks sit in fences longer than any backtick run they hold.
std::string render_markdown(const Report& report);

/// One table cell: newlines → spaces; `|`, `\`, `*`, `_`, `` ` ``, `[`, `]` backslash-escaped;
/// `<`, `>`, `&` as HTML entities; cut at max_chars with "…".
std::string md_cell(std::string_view text, std::size_t max_chars = 300);

/// A Markdown link [text](href) with the target's delimiters percent-encoded; text alone when
/// href is empty. text must already be escaped (md_cell).
std::string md_link(const std::string& text, const std::string& href);

/// "[source](local) [upstream](url)": whichever of the two links there are.
std::string md_source_link(const SourceLinks& links);

/// text inside a fenced code block whose fence is longer than any backtick run in text.
std::string md_code_block(std::string_view text, std::size_t max_chars = 20000);

}  // namespace devshim
