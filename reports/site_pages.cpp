// The pages of `runner site` (reports/site.h): the index, a suite's trend page, the gap log.
// Text from the database is escaped (html::escape); links are made here from ids and slugs only.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "reports/html_text.h"
#include "reports/site.h"
#include "reports/site_html.h"

namespace devshim {

namespace {

using nlohmann::json;

using site_html::head;
using site_html::nav;
using site_html::scripts;
using site_html::scroll;

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
          {"cuda_branch_failures", summary_value(r, "cuda_branch_failures")},
          {"cuda_branch_passed", summary_value(r, "cuda_branch_passed")},
          {"unlocked", summary_value(r, "unlocked")},
          {"flaky", summary_value(r, "flaky")},
          {"duration_s", summary_value(r, "duration_s")},
          {"gaps", summary_value(r, "gaps")},
          {"cuda_path_tests", summary_value(r, "cuda_path_tests")},
          {"cuda_path_passed", summary_value(r, "cuda_path_passed")},
          {"href", fmt::format("{}runs/{}/report.html", to_root, r.run.id)}};
}

std::string text_or_dash(const std::string& s) { return s.empty() ? "-" : esc(s); }

std::string count_cell(const json& v) {
  if (!v.is_number()) return "<td class=\"num\" data-value=\"-1\">-</td>";
  return fmt::format("<td class=\"num\" data-value=\"{}\">{}</td>", v.dump(), v.dump());
}

// A run's commit, short, linked upstream when its suite's source_url says where.
std::string commit_cell(const RunRecord& run) {
  if (run.project_commit.empty()) return "-";
  const std::string shown = esc(run.project_commit.substr(0, 10));
  const std::string url = html::safe_href(commit_url(run.source_url, run.project_commit));
  if (url.empty()) return "<code>" + shown + "</code>";
  return fmt::format("<a class=\"commit\" href=\"{}\"><code>{}</code></a>", esc(url), shown);
}

// The table of runs; to_root: the path from the page to the site's root ("" or "../../").
std::string runs_table(const std::vector<SiteRun>& runs, const std::string& to_root) {
  std::string out =
      "<div class=\"filter\"><input id=\"runs-filter\" type=\"search\" placeholder=\"filter runs "
      "(words: suite, mode, policy, status, torch, …)\" aria-label=\"filter runs\"> <span "
      "id=\"runs-count\" class=\"hint\"></span></div>\n"
      "<div class=\"scroll\">\n<table id=\"runs-table\"><thead><tr><th "
      "data-type=\"number\">Run</th><th>Suite</th>"
      "<th>Mode</th><th>Policy</th><th>Shim</th><th>torch</th><th>Start</th><th>Status</th>"
      "<th>Started (UTC)</th><th>Commit</th><th data-type=\"number\">Tests</th>"
      "<th data-type=\"number\">Pass rate</th><th data-type=\"number\">New failures</th>"
      "<th data-type=\"number\" title=\"tests that passed without the shim on code that ran "
      "both ways and fail or are lost with it\">Regressions</th><th data-type=\"number\" "
      "title=\"tests that passed without the shim and fail on a CUDA path the baseline could not "
      "take\">CUDA-branch failures</th><th data-type=\"number\">Duration (s)</th>"
      "<th data-type=\"number\" title=\"tests that did device work on a CUDA path under the "
      "shim: passed of all\">CUDA path</th></tr></thead><tbody>\n";
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
    out += "<td>" + commit_cell(r.run) + "</td>";
    out += count_cell(summary_value(r, "tests"));
    out += pass.is_number() ? fmt::format("<td class=\"num\" data-value=\"{:.4f}\">{:.1f}%</td>",
                                          pass.get<double>(), 100 * pass.get<double>())
                            : "<td class=\"num\" data-value=\"-1\">-</td>";
    out += count_cell(summary_value(r, "new_failures"));
    out += count_cell(summary_value(r, "regressions"));
    out += count_cell(summary_value(r, "cuda_branch_failures"));
    out += duration.is_number()
               ? fmt::format("<td class=\"num\" data-value=\"{0:.0f}\">{0:.0f}</td>",
                             duration.get<double>())
               : "<td class=\"num\" data-value=\"-1\">-</td>";
    const json cuda_tests = summary_value(r, "cuda_path_tests");
    const json cuda_passed = summary_value(r, "cuda_path_passed");
    out += cuda_tests.is_number() && cuda_passed.is_number()
               ? fmt::format("<td class=\"num\" data-value=\"{0}\">{0} of {1}</td>",
                             cuda_passed.dump(), cuda_tests.dump())
               : "<td class=\"num\" data-value=\"-1\">-</td>";
    out += "</tr>\n";
  }
  out += "</tbody></table>\n</div>\n";
  return out;
}

std::string run_link(std::int64_t id, const std::string& to_root) {
  return fmt::format("<a href=\"{}runs/{}/report.html\">run {}</a>", to_root, id, id);
}

// Failures grouped by signature, followed across the suite's runs (each run's report clusters
// them; site.json keeps them): the clusters of the newest run first, then those gone, newest
// first; each with the runs it was seen in and a strip of its size over the last 30 runs.
std::string clusters_section(const std::vector<SiteRun>& runs, const std::string& to_root) {
  struct Seen {
    const SiteRunDigest::Cluster* cluster = nullptr;  // as the newest run that had it saw it
    std::int64_t first = 0, last = 0;
    int runs = 0;
    int newest_tests = 0;  // in the suite's newest run; 0: not there
    std::map<std::int64_t, int> tests;
  };
  std::map<std::string, Seen> by_signature;
  std::vector<std::string> order;  // signatures, as first met from the newest run back
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const auto& c : runs[i].digest.clusters) {
      auto [it, added] = by_signature.try_emplace(c.signature);
      Seen& s = it->second;
      if (added) {
        order.push_back(c.signature);
        s.cluster = &c;
        s.last = runs[i].run.id;
        if (i == 0) s.newest_tests = c.tests;
      }
      s.first = runs[i].run.id;
      ++s.runs;
      s.tests[runs[i].run.id] = c.tests;
    }
  }
  if (order.empty()) return "";
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return by_signature[a].newest_tests > by_signature[b].newest_tests;
  });
  const std::size_t shown = std::min<std::size_t>(order.size(), 30);
  const std::size_t strip = std::min<std::size_t>(runs.size(), 30);
  std::string out = fmt::format(
      "<section id=\"clusters\"><h2>Failure clusters across runs <span "
      "class=\"count\">({})</span></h2>\n<p class=\"hint\">Failures that share a signature "
      "(numbers, paths and devices abstracted), followed run by run{}; the strip: its tests in "
      "each of the last {} runs, oldest first.</p>\n",
      order.size(), shown < order.size() ? fmt::format("; the {} biggest shown", shown) : "",
      strip);
  std::string table =
      "<table id=\"clusters-table\"><thead><tr><th>Failure</th><th data-type=\"number\">Tests "
      "now</th><th>First seen</th><th>Last seen</th><th data-type=\"number\">Runs</th>"
      "<th>Last runs</th></tr></thead><tbody>\n";
  for (std::size_t k = 0; k < shown; ++k) {
    const Seen& s = by_signature[order[k]];
    std::string cells;
    for (std::size_t i = strip; i-- > 0;) {
      const std::int64_t id = runs[i].run.id;
      const auto t = s.tests.find(id);
      const int n = t == s.tests.end() ? 0 : t->second;
      cells += fmt::format(
          "<a class=\"cell {0}\" href=\"{1}runs/{2}/report.html#clusters\" title=\"run {2}: {3} "
          "test{4}\" aria-label=\"run {2}: {3} test{4}\"></a>",
          n > 0 ? "s-failed" : "s-none", to_root, id, n, n == 1 ? "" : "s");
    }
    const std::string what = s.cluster->exception.empty()
                                 ? s.cluster->message
                                 : s.cluster->exception + ": " + s.cluster->message;
    table += fmt::format(
        "<tr><td class=\"message\"><code>{}</code></td><td class=\"num\">{}</td><td>{}</td>"
        "<td>{}</td><td class=\"num\">{}</td><td><div class=\"strip\">{}</div></td></tr>\n",
        esc(what.size() > 200 ? what.substr(0, 200) + "…" : what), s.newest_tests,
        run_link(s.first, to_root), run_link(s.last, to_root), s.runs, cells);
  }
  table += "</tbody></table>\n";
  return out + scroll(table) + "</section>\n";
}

// The slowest tests and files of the suite's newest run.
std::string slowest_section(const std::vector<SiteRun>& runs,
                            const std::vector<SiteSlowTest>& slowest, const std::string& to_root) {
  if (runs.empty()) return "";
  const SiteRun& newest = runs.front();
  std::string out = fmt::format(
      "<section id=\"slowest\"><h2>Slowest tests and files</h2>\n<p class=\"hint\">Of the "
      "newest run, {}.</p>\n<div class=\"two-columns\">\n",
      run_link(newest.run.id, to_root));
  std::string tests =
      "<table id=\"slowest-tests\"><thead><tr><th>Test</th><th data-type=\"number\">Seconds</th>"
      "</tr></thead><tbody>\n";
  for (const SiteSlowTest& t : slowest) {
    tests += fmt::format(
        "<tr><td class=\"test\"><a href=\"{}{}\">{}</a></td><td class=\"num\">{:.2f}</td>"
        "</tr>\n",
        to_root, t.page, esc(site_test_label(newest.run, t.ref)), t.duration_s);
  }
  tests += "</tbody></table>\n";
  std::string files =
      "<table id=\"slowest-files\"><thead><tr><th>File</th><th data-type=\"number\">Seconds</th>"
      "</tr></thead><tbody>\n";
  for (const auto& [path, seconds] : newest.digest.slow_files) {
    files += fmt::format("<tr><td class=\"path\">{}</td><td class=\"num\">{:.2f}</td></tr>\n",
                         esc(path), seconds);
  }
  files += "</tbody></table>\n";
  return out + "<div>" + scroll(tests) + "</div><div>" + scroll(files) + "</div>\n</div>\n" +
         "</section>\n";
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
  out += scripts(json::object(), false);
  out += "</body>\n</html>\n";
  return out;
}

std::string render_site_suite(const std::string& suite, const std::vector<SiteRun>& runs,
                              const std::vector<SiteSlowTest>& slowest) {
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
  out += "</p></header>\n" + nav(to_root, suite, runs.empty() ? "" : runs.front().suite_dir) +
         "<main>\n<section id=\"trends\">\n<div id=\"charts\"></div>\n</section>\n";
  out += clusters_section(runs, to_root);
  out += slowest_section(runs, slowest, to_root);
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
  std::string out = head("devshim · API gap log", false);
  out += "<body>\n<header class=\"run\"><h1>API gap log</h1><p class=\"hint\">";
  out += fmt::format(
      "{} entries: torch APIs the shim does not carry well yet (docs/gaps.md), each of the suite "
      "whose runs showed it, biggest impact first",
      gaps.size());
  out += "</p></header>\n" + nav("") + "<main>\n";
  std::string table =
      "<table id=\"gaps-table\"><thead><tr><th>Suite</th><th>API</th><th>Kind</th>"
      "<th>Status</th><th>Severity</th><th>Tests</th><th>First seen</th><th>Last seen</th>"
      "<th>Fixed in</th><th>Action</th></tr></thead><tbody>\n";
  for (const GapEntry& g : gaps) {
    table += fmt::format(
        "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        g.suite.empty() ? "-" : esc(g.suite), esc(g.api), esc(g.kind), esc(g.status),
        esc(g.severity), g.tests, run_link(g.first_seen_run, g.first_seen_at),
        run_link(g.last_seen_run, g.last_seen_at), run_link(g.fixed_in_run, ""), esc(g.action));
  }
  table += "</tbody></table>\n";
  out += scroll(table) + "</main>\n";
  out += scripts(json::object(), false);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace devshim
