// Text files embedded into the runner at build time (reports/CMakeLists.txt,
// cmake/embed_assets.cmake), for the pages the runner writes to inline: uPlot from npm
// (package.json), the site's own script and style (reports/site/), the reports' style sheet and
// report.html's script (reports/html/).
#pragma once

#include <string_view>

namespace devshim::assets {

extern const std::string_view uplot_js;       ///< uPlot's IIFE build, minified
extern const std::string_view uplot_css;      ///< its style sheet
extern const std::string_view uplot_license;  ///< its MIT licence
extern const std::string_view site_js;        ///< reports/site/site.js
extern const std::string_view site_css;       ///< reports/site/site.css
/// reports/html/report.css: every page's style sheet (html::page_head), light and dark.
extern const std::string_view report_css;
/// reports/html/report.js: report.html's failure filter and ready flag (contract in
/// reports/html.h).
extern const std::string_view report_js;

}  // namespace devshim::assets
