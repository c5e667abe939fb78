// The pages of `runner site` (reports/site.h): the index, a suite's trend page, the gap log.
// Text from the database is escaped (html::escape); links are made here from ids and slugs only.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "reports/html.h"
#include "reports/site.h"
#include "reports/site_assets.h"

namespace devshim {

namespace {

using nlohmann::json;

std::string esc(std::string_view s) { return html::escape(s); }

json summary_value(const SiteRun& r, const char* key) {
  const auto it = r.summary.find(key);
  return it == r.summary.end() ? json(nullptr) : *it;
}

// What the charts read of a run (site.js): counts, comparisons, and the link to its report.
json chart_point(const SiteRun& r, const std::string& to_root) {
  json by_status = summary_value(r, "by_status");
  return {{"id", r.run.id},
          {"started_at", r.run.started_at},
          {"mode", r.run.mode},
          {"policy", r.policy},
          {"torch", r.versions.torch},
          {"commit", r.run.project_commit.substr(0, 12)},
          {"status", r.run.status},
          {"by_status", by_status.is_object() ? by_status : json::object()},
          {"pass_rate", summary_value(r, "pass_rate")},
          {"new_failures", summary_value(r, "new_failures")},
          {"fixed", summary_value(r, "fixed")},
          {"regressions", summary_value(r, "regressions")},
          {"unlocked", summary_value(r, "unlocked")},
          {"flaky", summary_value(r, "flaky")},
          {"duration_s", summary_value(r, "duration_s")},
          {"gaps", summary_value(r, "gaps")},
          {"href", fmt::format("{}runs/{}/report.html", to_root, r.run.id)}};
}

// JSON inside <script type="application/json">: '<' escaped, so no "</script>" can end it early.
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

std::string text_or_dash(const std::string& s) { return s.empty() ? "-" : esc(s); }

std::string count_cell(const json& v) {
  if (!v.is_number()) return "<td class=\"num\" data-value=\"-1\">-</td>";
  return fmt::format("<td class=\"num\" data-value=\"{}\">{}</td>", v.dump(), v.dump());
}

// The table of runs; to_root: the path from the page to the site's root ("" or "../../").
std::string runs_table(const std::vector<SiteRun>& runs, const std::string& to_root) {
  std::string out =
      "<div class=\"filter\"><input id=\"runs-filter\" type=\"search\" placeholder=\"filter runs "
      "(words: suite, mode, policy, status, torch, …)\" aria-label=\"filter runs\"> <span "
      "id=\"runs-count\" class=\"hint\"></span></div>\n"
      "<table id=\"runs-table\"><thead><tr><th data-type=\"number\">Run</th><th>Suite</th>"
      "<th>Mode</th><th>Policy</th><th>Shim</th><th>torch</th><th>Start</th><th>Status</th>"
      "<th>Started (UTC)</th><th data-type=\"number\">Tests</th>"
      "<th data-type=\"number\">Pass rate</th><th data-type=\"number\">New failures</th>"
      "<th data-type=\"number\">Regressions</th><th data-type=\"number\">Duration (s)</th>"
      "</tr></thead><tbody>\n";
  for (const SiteRun& r : runs) {
    const json pass = summary_value(r, "pass_rate");
    const json duration = summary_value(r, "duration_s");
    out += fmt::format(
        "<tr data-run=\"{0}\"><td class=\"num\" data-value=\"{0}\"><a "
        "href=\"{1}runs/{0}/report.html\">{0}</a></td><td><a "
        "href=\"{1}suites/{2}/index.html\">{3}</a></td><td>{4}</td><td>{5}</td><td>{6}</td>"
        "<td>{7}</td><td>{10}</td><td><span class=\"status status-{8}\">{8}</span></td>"
        "<td>{9}</td>",
        r.run.id, to_root, esc(r.suite_dir), esc(r.run.suite), esc(r.run.mode),
        text_or_dash(r.policy), text_or_dash(r.versions.shim), text_or_dash(r.versions.torch),
        esc(r.run.status), esc(r.run.started_at), text_or_dash(start_mode(r.run)));
    out += count_cell(summary_value(r, "tests"));
    out += pass.is_number() ? fmt::format("<td class=\"num\" data-value=\"{:.4f}\">{:.1f}%</td>",
                                          pass.get<double>(), 100 * pass.get<double>())
                            : "<td class=\"num\" data-value=\"-1\">-</td>";
    out += count_cell(summary_value(r, "new_failures"));
    out += count_cell(summary_value(r, "regressions"));
    out += duration.is_number()
               ? fmt::format("<td class=\"num\" data-value=\"{0:.0f}\">{0:.0f}</td>",
                             duration.get<double>())
               : "<td class=\"num\" data-value=\"-1\">-</td>";
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  return out;
}

std::string nav(const std::string& to_root) {
  return fmt::format(
      "<nav class=\"toc\"><a href=\"{0}index.html\">All suites</a> · <a "
      "href=\"{0}gaps.html\">API gap log</a></nav>\n",
      to_root);
}

}  // namespace

std::string render_site_index(const std::vector<SiteRun>& runs, const std::string& db_name) {
  std::string out = head("devshim · runs", false);
  out += "<body>\n<header class=\"run\"><h1>devshim runs</h1><p class=\"hint\">";
  out += fmt::format("{} runs of database {}", runs.size(), esc(db_name));
  out += "</p></header>\n" + nav("") +
         "<main>\n<section id=\"suites\"><h2>Suites</h2>\n<ul class=\"suites\">\n";
  std::vector<std::string> seen;
  for (const SiteRun& r : runs) {  // newest first: the first run of a suite is its newest
    if (std::find(seen.begin(), seen.end(), r.run.suite) != seen.end()) continue;
    seen.push_back(r.run.suite);
    const json pass = summary_value(r, "pass_rate");
    out += fmt::format(
        "<li><a href=\"suites/{}/index.html\">{}</a>: newest run <a "
        "href=\"runs/{}/report.html\">{}</a> ({}, {}, <span class=\"status status-{}\">{}</span>{})"
        "</li>\n",
        esc(r.suite_dir), esc(r.run.suite), r.run.id, r.run.id, esc(r.run.mode),
        esc(r.run.started_at), esc(r.run.status), esc(r.run.status),
        pass.is_number() ? fmt::format(", pass rate {:.1f}%", 100 * pass.get<double>()) : "");
  }
  out += "</ul>\n</section>\n<section id=\"runs\"><h2>Runs</h2>\n";
  out += runs_table(runs, "");
  out += "</section>\n</main>\n";
  out += scripts(json{{"runs", json::array()}}, false);
  out += "</body>\n</html>\n";
  return out;
}

std::string render_site_suite(const std::string& suite, const std::vector<SiteRun>& runs) {
  const std::string to_root = "../../";
  // One line of charts per mode and policy, most runs first; each line oldest to newest.
  std::vector<std::pair<std::string, std::vector<int>>> lines;
  json points = json::array();
  for (int i = static_cast<int>(runs.size()) - 1; i >= 0; --i) {
    const SiteRun& r = runs[static_cast<std::size_t>(i)];
    const std::string label = r.run.mode == "shim" ? "shim · policy " + r.policy : r.run.mode;
    auto line =
        std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.first == label; });
    if (line == lines.end()) line = lines.insert(lines.end(), {label, {}});
    line->second.push_back(static_cast<int>(points.size()));
    points.push_back(chart_point(r, to_root));
  }
  // Most runs first; at a tie, shim runs (what the site is about) before baseline runs.
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) {
    if (a.second.size() != b.second.size()) return a.second.size() > b.second.size();
    return a.first.starts_with("shim") && !b.first.starts_with("shim");
  });
  json data{{"runs", points}, {"lines", json::array()}};
  for (const auto& [label, indexes] : lines) {
    data["lines"].push_back({{"label", label}, {"runs", indexes}});
  }

  std::string out = head("devshim · " + suite, true);
  out += "<body>\n<header class=\"run\"><h1>" + esc(suite) + "</h1><p class=\"hint\">";
  out += fmt::format("{} runs; one point per run: hover for the run, click to open its report",
                     runs.size());
  out += "</p></header>\n" + nav(to_root) +
         "<main>\n<section id=\"trends\">\n<div id=\"charts\"></div>\n</section>\n";
  out +=
      "<section id=\"runs\"><h2>Runs</h2>\n" + runs_table(runs, to_root) + "</section>\n</main>\n";
  out += scripts(data, true);
  out += "</body>\n</html>\n";
  return out;
}

std::string render_site_gaps(const std::vector<GapEntry>& gaps,
                             const std::map<std::int64_t, std::string>& run_pages) {
  auto run_link = [&](std::int64_t id, const std::string& at) {
    if (id <= 0) return std::string("-");
    const auto page = run_pages.find(id);
    const std::string label = fmt::format("run {}", id) + (at.empty() ? "" : " · " + esc(at));
    return page == run_pages.end() ? label
                                   : fmt::format("<a href=\"{}\">{}</a>", page->second, label);
  };
  std::string out = html::page_head("devshim · API gap log");
  out += "<body>\n<header class=\"run\"><h1>API gap log</h1><p class=\"hint\">";
  out += fmt::format(
      "{} entries: torch APIs the shim does not carry well yet (docs/gaps.md), biggest impact "
      "first",
      gaps.size());
  out += "</p></header>\n" + nav("") + "<main>\n";
  out +=
      "<table id=\"gaps-table\"><thead><tr><th>API</th><th>Kind</th><th>Status</th>"
      "<th>Severity</th><th>Tests</th><th>First seen</th><th>Last seen</th><th>Fixed in</th>"
      "<th>Action</th></tr></thead><tbody>\n";
  for (const GapEntry& g : gaps) {
    out += fmt::format(
        "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        esc(g.api), esc(g.kind), esc(g.status), esc(g.severity), g.tests,
        run_link(g.first_seen_run, g.first_seen_at), run_link(g.last_seen_run, g.last_seen_at),
        run_link(g.fixed_in_run, ""), esc(g.action));
  }
  out += "</tbody></table>\n</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace devshim
