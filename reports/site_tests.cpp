// The site's pages about tests (reports/site.h): one page per test, and the search page.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "reports/html_text.h"
#include "reports/site.h"
#include "reports/site_html.h"
#include "runner/results/native_id.h"

namespace devshim {

namespace {

using nlohmann::json;

std::string esc(std::string_view s) { return html::escape(s); }

bool failing(CaseStatus s) { return s == CaseStatus::kFailed || s == CaseStatus::kError; }

// What a strip's cell says of a run: failed, error, "flaky", or "ok" (it did not fail there:
// passed, skipped or was absent; the digests name only the tests that did not pass).
std::string outcome(const TestHistoryEntry* e) {
  if (e == nullptr) return "ok";
  if (e->flaky) return "flaky";
  return std::string(to_string(e->test.status));
}

struct Line {
  std::string label;
  std::vector<const SiteRun*> runs;  // oldest first
};

// The suite's runs by mode and policy, as the suite page's charts: most runs first, at a tie
// shim before baseline.
std::vector<Line> lines_of(const std::vector<SiteRun>& runs) {
  std::vector<Line> lines;
  for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
    const std::string label = r->run.mode == "shim" ? "shim · policy " + r->policy : r->run.mode;
    auto line =
        std::find_if(lines.begin(), lines.end(), [&](const Line& l) { return l.label == label; });
    if (line == lines.end()) line = lines.insert(lines.end(), Line{label, {}});
    line->runs.push_back(&*r);
  }
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    if (a.runs.size() != b.runs.size()) return a.runs.size() > b.runs.size();
    return a.label.starts_with("shim") && !b.label.starts_with("shim");
  });
  return lines;
}

std::string percent(int part, int whole) {
  if (whole == 0) return "-";
  return fmt::format("{} of {} ({:.1f}%)", part, whole, 100.0 * part / whole);
}

// A line of durations, oldest run first, drawn as an SVG polyline scaled to its maximum.
std::string duration_plot(const std::vector<double>& seconds) {
  if (seconds.size() < 2) return "";
  const double top = std::max(*std::max_element(seconds.begin(), seconds.end()), 1e-6);
  const double w = 600, h = 80;
  std::string points;
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    points += fmt::format("{:.1f},{:.1f} ",
                          w * static_cast<double>(i) / static_cast<double>(seconds.size() - 1),
                          h - h * seconds[i] / top);
  }
  return fmt::format(
      "<p class=\"hint\">Duration in the runs it did not pass, oldest first: 0 to {:.2f} "
      "s</p>\n<svg "
      "class=\"durations\" viewBox=\"-2 -2 {} {}\" preserveAspectRatio=\"none\" role=\"img\" "
      "aria-label=\"durations, run by run\"><polyline fill=\"none\" stroke=\"#8250df\" "
      "stroke-width=\"1.5\" vector-effect=\"non-scaling-stroke\" points=\"{}\"/></svg>",
      top, w + 4, h + 4, points);
}

}  // namespace

std::string site_test_label(const RunRecord& run, const SiteTestRef& t) {
  return test_label(run, t.file, t.classname, t.name);
}

std::string site_test_label(const SiteTest& t) {
  return site_test_label(t.history.empty() ? RunRecord{} : t.history.front().run, t.ref);
}

std::string site_test_page(const std::string& suite_dir, const SiteTestRef& t) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&](std::string_view s) {
    for (const char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001b3ULL;
    }
    h ^= 0xff;  // a separator no name holds
    h *= 0x100000001b3ULL;
  };
  mix(t.file);
  mix(t.classname);
  mix(t.name);
  return fmt::format("tests/{}/{:016x}.html", suite_dir, h);
}

std::string commit_url(const std::string& source_url, const std::string& commit) {
  if (commit.empty()) return "";
  for (const std::string_view blob :
       {"/-/blob/{commit}", "/blob/{commit}", "/src/commit/{commit}"}) {
    const auto at = source_url.find(blob);
    if (at == std::string::npos) continue;
    const std::string_view kind = blob.starts_with("/-/") ? "/-/commit/" : "/commit/";
    return source_url.substr(0, at) + std::string(kind) + commit;
  }
  return "";
}

std::string render_site_test(const SiteTest& t, const std::vector<SiteRun>& runs) {
  const std::string to_root = "../../";
  std::map<std::int64_t, const TestHistoryEntry*> by_run;
  for (const auto& e : t.history) by_run.emplace(e.run.id, &e);
  auto entry = [&](const SiteRun* r) {
    const auto it = by_run.find(r->run.id);
    return it == by_run.end() ? nullptr : it->second;
  };
  const std::string label = site_test_label(t);
  std::string out = site_html::head("devshim · " + label, false);
  out += "<body>\n<header class=\"run\"><h1 class=\"test-name\">" + esc(label) + "</h1>";
  out += fmt::format(
      "<p class=\"hint\">A test of suite <a href=\"{}suites/{}/index.html\">{}</a>: its outcome in "
      "each of the site's {} runs of the suite (ok: it did not fail; passed, skipped or "
      "absent).</p></header>\n",
      to_root, esc(t.suite_dir), esc(t.suite), runs.size());
  out += site_html::nav(to_root, t.suite, t.suite_dir) + "<main>\n";

  const std::vector<Line> lines = lines_of(runs);
  std::string table =
      "<table id=\"test-lines\"><thead><tr><th>Runs</th><th>Newest</th><th>Failing since</th>"
      "<th>Failed</th><th>Flaky</th><th>Duration (s)</th></tr></thead><tbody>\n";
  std::string strips;
  for (const Line& line : lines) {
    const auto present = static_cast<int>(line.runs.size());
    int failed = 0, flaky = 0;
    std::vector<double> seconds;
    std::string cells;
    for (const SiteRun* r : line.runs) {
      const TestHistoryEntry* e = entry(r);
      const std::string what = outcome(e);
      if (e != nullptr) {
        failed += failing(e->test.status) ? 1 : 0;
        flaky += e->flaky ? 1 : 0;
        seconds.push_back(e->test.duration_s);
      }
      cells += fmt::format(
          "<a class=\"cell s-{0}\" href=\"{1}runs/{2}/report.html\" title=\"run {2} · {3} · {0}\" "
          "aria-label=\"run {2}: {0}\"></a>",
          what, to_root, r->run.id, esc(r->run.started_at));
    }
    // Failing since: the oldest run of the failing streak that reaches the newest run.
    std::string since = "not failing";
    const SiteRun* newest = line.runs.back();
    const TestHistoryEntry* now = entry(newest);
    if (now != nullptr && failing(now->test.status) && !now->flaky) {
      const SiteRun* first = newest;
      for (auto r = line.runs.rbegin(); r != line.runs.rend(); ++r) {
        const TestHistoryEntry* e = entry(*r);
        if (e == nullptr || !failing(e->test.status) || e->flaky) break;
        first = *r;
      }
      since = fmt::format("<a href=\"{}runs/{}/report.html\">run {}</a> ({})", to_root,
                          first->run.id, first->run.id, esc(first->run.started_at.substr(0, 10)));
    } else if (failed > 0) {
      for (auto r = line.runs.rbegin(); r != line.runs.rend(); ++r) {
        const TestHistoryEntry* e = entry(*r);
        if (e != nullptr && failing(e->test.status) && !e->flaky) {
          since =
              fmt::format("passing; last failed in <a href=\"{}runs/{}/report.html\">run {}</a>",
                          to_root, (*r)->run.id, (*r)->run.id);
          break;
        }
      }
    }
    std::string duration = "-";
    if (!seconds.empty()) {
      std::vector<double> sorted = seconds;
      std::sort(sorted.begin(), sorted.end());
      duration =
          fmt::format("median {:.2f} · max {:.2f}", sorted[sorted.size() / 2], sorted.back());
    }
    table += fmt::format(
        "<tr><td>{}</td><td><span class=\"status status-{}\">{}</span></td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        esc(line.label), outcome(now), outcome(now), since, percent(failed, present),
        percent(flaky, present), duration);
    strips += fmt::format(
        "<h3>{} <span class=\"count\">({} runs, oldest first)</span></h3>\n<div class=\"strip "
        "test-strip\">{}</div>\n{}\n",
        esc(line.label), line.runs.size(), cells, duration_plot(seconds));
  }
  table += "</tbody></table>\n";
  out += "<section id=\"outcomes\"><h2>Outcomes</h2>\n" + site_html::scroll(table) + strips +
         "</section>\n";

  // Its failures' messages, newest first: what its runs' logs said.
  std::string failures;
  int shown = 0;
  for (const auto& e : t.history) {
    if (!failing(e.test.status) && !e.flaky) continue;
    if (++shown > 10) break;
    std::string message = e.test.exception;
    if (!e.test.message.empty()) message += (message.empty() ? "" : ": ") + e.test.message;
    failures += fmt::format(
        "<li><a href=\"{}runs/{}/report.html\">run {}</a> · {} · {} · <span class=\"status "
        "status-{}\">{}</span>{}<pre class=\"log\">{}</pre></li>\n",
        to_root, e.run.id, e.run.id, esc(e.run.mode), esc(e.run.started_at), outcome(&e),
        outcome(&e), e.attempts > 0 ? fmt::format(" · {} attempts", e.attempts) : "", esc(message));
  }
  if (!failures.empty()) {
    out += "<section id=\"failures\"><h2>Failures, newest first</h2>\n<ul class=\"failures\">\n" +
           failures + "</ul>\n</section>\n";
  }
  out += "</main>\n" + site_html::scripts(json::object(), false) + "</body>\n</html>\n";
  return out;
}

std::string render_site_search(const std::vector<SiteTest>& tests,
                               const std::map<std::string, std::int64_t>& newest_runs) {
  json data = json::array();
  for (const SiteTest& t : tests) {
    std::string tags;
    const auto newest = newest_runs.find(t.suite);
    const bool now = !t.history.empty() && newest != newest_runs.end() &&
                     t.history.front().run.id == newest->second;
    const std::string status = now ? outcome(&t.history.front()) : "ok";
    bool ever_failed = false, ever_flaky = false;
    for (const auto& e : t.history) {
      ever_failed = ever_failed || failing(e.test.status);
      ever_flaky = ever_flaky || e.flaky;
    }
    if (ever_failed) tags += "failed ";
    if (ever_flaky) tags += "flaky ";
    data.push_back({{"test", site_test_label(t)},
                    {"suite", t.suite},
                    {"status", status},
                    {"tags", tags},
                    {"href", site_test_page(t.suite_dir, t.ref)}});
  }
  std::string out = site_html::head("devshim · search tests", false);
  out += "<body>\n<header class=\"run\"><h1>Search tests</h1><p class=\"hint\">";
  out += fmt::format(
      "{} tests with a page: each that failed, errored or was flaky in a run of the site, and the "
      "slowest of each suite. Words match the test, its suite, its newest status and "
      "\"failed\" / \"flaky\".",
      tests.size());
  out += "</p></header>\n" + site_html::nav("") + "<main>\n";
  out +=
      "<div class=\"filter\"><input id=\"test-search\" type=\"search\" placeholder=\"words of a "
      "test, a suite, a status\" aria-label=\"search tests\"> <span id=\"test-count\" "
      "class=\"hint\"></span></div>\n<ul id=\"test-results\" class=\"test-results\"></ul>\n";
  out += "</main>\n" + site_html::scripts(json{{"tests", data}}, false) + "</body>\n</html>\n";
  return out;
}

}  // namespace devshim
