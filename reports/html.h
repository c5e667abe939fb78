// The HTML report (report.html): one self-contained page (inline CSS and JS, no external asset)
// to browse a run: environment, summary, failure clusters, a filterable table of failures and a
// per-file table.
#pragma once

#include <string>
#include <string_view>

#include "reports/report.h"

namespace devshim {

/// Renders the whole page. Every text that comes from tests (names, messages, tracebacks, paths)
/// is HTML-escaped; links are taken from the model only and pass html::safe_href.
///
/// What the page's script promises (tests/reports/browser/check_report_in_chromium.py relies on
/// it): once it has initialised without error, <body> carries data-ready="1"; the failures
/// table (#failures-table) has one <tr class="failure"> per failing case, and the filter
/// (#failure-filter, pre-filled from a URL hash "#filter=<percent-encoded text>") sets the
/// `hidden` attribute on every row whose text does not contain all the filter's words
/// (case-insensitive).
std::string render_html(const Report& report);

namespace html {

/// Escapes &, <, >, " and ' so that text is safe in element content and in quoted attribute
/// values; C0 control characters other than tab, newline and carriage return (and DEL) become
/// U+FFFD, since HTML cannot carry them.
std::string escape(std::string_view text);

/// The href to write for a link from the model, or "" when it must not be a link: accepted are
/// http and https URLs and relative references (a path, optionally with ?query and #fragment;
/// absolute paths too, but not "//host" network paths). Any other scheme (javascript:, data:,
/// file:, ...) is refused. Spaces, control characters, quotes, backslashes, < > and ` are
/// percent-encoded, so that a browser's URL clean-up ("java\tscript:") cannot turn an accepted
/// reference into another scheme. The result still needs escape() for the attribute.
std::string safe_href(std::string_view link);

/// The <head> every page devshim writes starts with, up to and including </head>: charset,
/// viewport, a Content-Security-Policy that allows inline style and script only, no referrer,
/// the title (escaped here), the reports' style sheet (light and dark) and extra_style after it.
std::string page_head(std::string_view title, std::string_view extra_style = {});

}  // namespace html

}  // namespace devshim
