// HTML text every page devshim writes shares (report.html, compare.html, the site's pages):
// escaping, safe links, the page head with the reports' style sheet.
#pragma once

#include <string>
#include <string_view>

namespace devshim {

namespace html {

/// Escapes &, <, >, " and ' so that text is safe in element content and in quoted attribute
/// values; C0 control characters other than tab, newline and carriage return (and DEL) become
/// U+FFFD, since HTML cannot carry them.
std::string escape(std::string_view text);

/// Appends escape(text) to out.
void append_escaped(std::string& out, std::string_view text);

/// The href to write for a link from the model, or "" when it must not be a link: accepted are
/// http and https URLs and relative references (a path, optionally with ?query and #fragment;
/// absolute paths too, but not "//host" network paths). Any other scheme (javascript:, data:,
/// file:, ...) is refused. Spaces, control characters, quotes, backslashes, < > and ` are
/// percent-encoded, so that a browser's URL clean-up ("java\tscript:") cannot turn an accepted
/// reference into another scheme. The result still needs escape() for the attribute.
std::string safe_href(std::string_view link);

/// The <head> every page devshim writes starts with, up to and including </head>: charset,
/// viewport, a Content-Security-Policy that allows inline style and script only, no referrer,
/// the title (escaped here), the reports' style sheet (reports/html/report.css: light and dark)
/// and extra_style after it.
std::string page_head(std::string_view title, std::string_view extra_style = {});

}  // namespace html

}  // namespace devshim
