// Text files embedded into the runner at build time (reports/CMakeLists.txt,
// cmake/embed_assets.cmake), for the site's pages to inline: uPlot from npm (package.json) and
// the site's own script and style (reports/site/).
#pragma once

#include <string_view>

namespace devshim::assets {

extern const std::string_view uplot_js;       ///< uPlot's IIFE build, minified
extern const std::string_view uplot_css;      ///< its style sheet
extern const std::string_view uplot_license;  ///< its MIT licence
extern const std::string_view site_js;        ///< reports/site/site.js
extern const std::string_view site_css;       ///< reports/site/site.css

}  // namespace devshim::assets
