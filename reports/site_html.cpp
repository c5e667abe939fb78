#include "reports/site_html.h"

#include <fmt/format.h>

#include "reports/html_text.h"
#include "reports/site_assets.h"

namespace devshim::site_html {

using nlohmann::json;

std::string script_json(const json& data) {
  const std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string head(std::string_view title, bool charts) {
  std::string style = charts ? std::string(assets::uplot_css) : std::string();
  style += assets::site_css;
  return html::page_head(title, style);
}

std::string scripts(const json& data, bool charts) {
  std::string out =
      "<script type=\"application/json\" id=\"site-data\">" + script_json(data) + "</script>\n";
  if (charts) {
    out += "<script>/*! uPlot, https://github.com/leeoniya/uPlot\n";
    out += assets::uplot_license;
    out += "*/\n";
    out += assets::uplot_js;
    out += "</script>\n";
  }
  out += "<script>";
  out += assets::site_js;
  out += "</script>\n";
  return out;
}

namespace {

std::string nav_links(const std::string& to_root, const std::string& suite,
                      const std::string& suite_dir) {
  std::string out = fmt::format("<a href=\"{}index.html\">All suites</a>", to_root);
  if (!suite_dir.empty()) {
    out += fmt::format("<a href=\"{}suites/{}/index.html\">Suite {}</a>", to_root,
                       html::escape(suite_dir), html::escape(suite));
  }
  out += fmt::format(
      "<a href=\"{0}gaps.html\">API gap log</a><a href=\"{0}search.html\">Search tests</a>",
      to_root);
  return out;
}

}  // namespace

std::string nav(const std::string& to_root, const std::string& suite,
                const std::string& suite_dir) {
  return fmt::format(
      "<nav class=\"toc site-nav\" aria-label=\"Site\" data-root=\"{}\">{}<input id=\"nav-search\" "
      "type=\"search\" placeholder=\"search tests\" aria-label=\"search tests\"></nav>\n",
      to_root, nav_links(to_root, suite, suite_dir));
}

std::string report_nav(const std::string& to_root, const std::string& suite,
                       const std::string& suite_dir) {
  return fmt::format("<nav class=\"toc site-nav\" aria-label=\"Site\">{}</nav>\n",
                     nav_links(to_root, suite, suite_dir));
}

std::string scroll(const std::string& table) {
  return "<div class=\"scroll\">\n" + table + "</div>\n";
}

}  // namespace devshim::site_html
