// The HTML report (report.html): one self-contained page (inline CSS and JS, no external asset)
// to browse a run: environment, summary, failure clusters, a filterable table of failures and a
// per-file table.
#pragma once

#include <string>
#include <string_view>

#include "reports/report.h"

namespace devshim {

/// Renders the whole page. Every text that comes from tests (names, messages, tracebacks, paths)
/// is HTML-escaped; links are taken from the model only and pass html::safe_href
/// (reports/html_text.h). The page's style and script are reports/html/report.{css,js}.
///
/// What the page's script promises (tests/reports/browser/check_report_in_chromium.py relies on
/// it): once it has initialised without error, <body> carries data-ready="1"; the failures
/// table (#failures-table) has one <tr class="failure"> per failing case, and the filter
/// (#failure-filter, pre-filled from a URL hash "#filter=<percent-encoded text>") sets the
/// `hidden` attribute on every row whose text does not contain all the filter's words
/// (case-insensitive).
std::string render_html(const Report& report);

}  // namespace devshim
