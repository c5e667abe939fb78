// What the site's pages (site_pages.cpp, site_tests.cpp) share: their head, navigation and
// scripts. Text from the database is escaped; links are made from ids and slugs only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace devshim::site_html {

/// The page's head: the reports' style sheet, uPlot's when charts, the site's.
std::string head(std::string_view title, bool charts);
/// data in #site-data, uPlot when charts, then site.js.
std::string scripts(const nlohmann::json& data, bool charts);
/// JSON for a <script type="application/json">: '<' escaped, so no "</script>" ends it early.
std::string script_json(const nlohmann::json& data);
/// The bar on top of every page: the index, the page's suite (when suite_dir is not empty), the
/// gap log, the search page and a search box (site.js: Enter opens search.html#q=<words>).
/// to_root: the path from the page to the site's root ("" or "../../").
std::string nav(const std::string& to_root, const std::string& suite = "",
                const std::string& suite_dir = "");
/// The same for a run's report.html, without the search box (its script is the report's).
std::string report_nav(const std::string& to_root, const std::string& suite,
                       const std::string& suite_dir);
/// A table inside a box that scrolls sideways when the table is wider than the screen.
std::string scroll(const std::string& table);

}  // namespace devshim::site_html
