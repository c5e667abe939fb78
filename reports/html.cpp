// report.html's renderer: one Page that writes the page's sections in order. One cohesive thing
// (about 1000 lines): every section links into the others through the indexes the Page builds
// once (a cluster by signature, a failure row by test), so the sections stay together. The HTML
// text every page shares is reports/html_text.h's; the style and script are reports/html/.
#include "reports/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parsers/test_result.h"
#include "reports/html_text.h"
#include "reports/report_text.h"
#include "reports/site_assets.h"
#include "runner/results/native_id.h"

namespace devshim {

namespace {

using html::append_escaped;

constexpr std::size_t kCellBytes = 500;  ///< longer text in a cell is cut, the rest in <details>
constexpr std::size_t kCellLines = 6;
constexpr std::size_t kOpenTestLists = 20;  ///< clusters with more tests list them collapsed

// The vocabulary (docs/database.md#status-values) in the order a reader expects; other values
// follow.
constexpr std::array<std::string_view, 8> kFileStatusOrder = {
    "passed", "failed", "error", "timeout", "crashed", "no_tests", "interrupted", "not_run"};
constexpr std::array<std::string_view, 6> kCaseStatusOrder = {"passed",  "failed",  "error",
                                                              "skipped", "xfailed", "xpassed"};

// ---- small text helpers -------------------------------------------------------------------

std::string_view status_class(std::string_view status) {
  if (status.empty()) return "other";
  for (char c : status) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return "other";
  }
  return status;
}

/// The longest prefix of text within kCellBytes and kCellLines that ends on a UTF-8 boundary.
std::string_view cell_prefix(std::string_view text) {
  std::size_t end = std::min(text.size(), kCellBytes);
  std::size_t lines = 0;
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n' && ++lines == kCellLines) {
      end = i;
      break;
    }
  }
  while (end > 0 && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  return text.substr(0, end);
}

std::string format_duration(double seconds) {
  if (!(seconds > 0)) return "0 s";
  if (seconds < 10) return fmt::format("{:.2f} s", seconds);
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto total = static_cast<long long>(std::llround(seconds));
  if (total < 3600) return fmt::format("{} min {:02} s", total / 60, total % 60);
  return fmt::format("{} h {:02} min", total / 3600, (total % 3600) / 60);
}

/// A value of the environment object as text: "" when missing or null.
std::string env_text(const nlohmann::json& env, const char* key) {
  if (!env.is_object()) return "";
  const auto it = env.find(key);
  if (it == env.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_boolean()) return it->get<bool>() ? "yes" : "no";
  return it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Statuses of counts in vocabulary order, then any others, skipping zero counts.
std::vector<std::pair<std::string, int>> ordered_counts(const std::map<std::string, int>& counts,
                                                        const std::string_view* order,
                                                        std::size_t n) {
  std::vector<std::pair<std::string, int>> out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto it = counts.find(std::string(order[i]));
    if (it != counts.end() && it->second != 0) out.emplace_back(*it);
  }
  for (const auto& [status, count] : counts) {
    bool known = false;
    for (std::size_t i = 0; i < n && !known; ++i) known = order[i] == status;
    if (!known && count != 0) out.emplace_back(status, count);
  }
  return out;
}

bool is_failing_file_status(std::string_view status) {
  return status == "failed" || status == "error" || status == "timeout" || status == "crashed";
}

/// One row of the failures table: a failing case, or a failing file with no failing case.
struct FailureRow {
  const ReportFile* file = nullptr;
  const ReportCase* test = nullptr;  ///< null: the whole file failed (import error, crash, ...)
};

std::string test_key(std::string_view file, std::string_view classname, std::string_view name) {
  std::string key;
  key.reserve(file.size() + classname.size() + name.size() + 2);
  key.append(file).append(1, '\0').append(classname).append(1, '\0').append(name);
  return key;
}

// ---- the page -----------------------------------------------------------------------------

class Page {
 public:
  explicit Page(const Report& report) : report_(report) {
    for (std::size_t i = 0; i < report.clusters.size(); ++i) {
      cluster_index_.emplace(report.clusters[i].signature, i + 1);
    }
    for (const auto& file : report.files) {
      bool any = false;
      for (const auto& c : file.cases) {
        if (!is_failure(c.test.status)) continue;
        any = true;
        rows_.push_back({&file, &c});
        row_index_.emplace(test_key(file.file.path, c.test.classname, c.test.name), rows_.size());
      }
      if (!any && is_failing_file_status(file.status)) rows_.push_back({&file, nullptr});
    }
  }

  std::string render() {
    out_.reserve(std::size_t{64} * 1024 + rows_.size() * 900);
    head();
    out_ += "<body>\n";
    header();
    nav();
    out_ += "<main>\n";
    glance();
    out_ +=
        "<!-- Later sections (differential: baseline vs shim; run-to-run: against an earlier run)"
        " go in this element, above the summary. -->\n"
        "<div id=\"later-sections\" class=\"later-sections\">";
    previous();
    flaky();
    cuda_path();
    differential();
    out_ += "</div>\n";
    file_errors();
    summary();
    clusters();
    failures();
    gaps();
    environment_entries();
    redirections();
    files();
    out_ += "</main>\n";
    footer();
    out_ += "<script>";
    out_ += assets::report_js;
    out_ += "</script>\n</body>\n</html>\n";
    return std::move(out_);
  }

 private:
  void text(std::string_view s) { append_escaped(out_, s); }

  /// A name (module path, class, test, file path): escaped, with a line-break opportunity
  /// (<wbr>) after each '.', '/', '_' and "::", so a narrow column wraps it between its parts
  /// rather than inside a word.
  void name_text(std::string_view s) {
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      const bool after =
          c == '.' || c == '/' || c == '_' ||
          (c == ':' && i + 1 < s.size() && s[i + 1] != ':' && i > 0 && s[i - 1] == ':');
      if (!after || i + 1 == s.size()) continue;
      append_escaped(out_, s.substr(start, i + 1 - start));
      out_ += "<wbr>";
      start = i + 1;
    }
    append_escaped(out_, s.substr(start));
  }

  void status_badge(std::string_view status) {
    out_ += "<span class=\"status status-";
    out_ += status_class(status);
    out_ += "\">";
    text(status);
    out_ += "</span>";
  }

  /// <a href=...>label</a> when the link is acceptable; nothing (or plain label) otherwise.
  bool link(std::string_view href, std::string_view label, bool label_if_refused = false) {
    const std::string safe = html::safe_href(href);
    if (safe.empty()) {
      if (label_if_refused) text(label);
      return false;
    }
    out_ += "<a href=\"";
    text(safe);
    out_ += safe.starts_with("http") ? "\" rel=\"noreferrer\">" : "\">";
    text(label);
    out_ += "</a>";
    return true;
  }

  void source_links(const SourceLinks& links) {
    out_ += "<span class=\"links\">";
    link(links.local, "source");
    link(links.upstream, "upstream");
    out_ += "</span>";
  }

  /// Text that may be long: the first kCellBytes / kCellLines as they are, all of it in
  /// <details>.
  void long_text(std::string_view s) {
    const std::string_view prefix = cell_prefix(s);
    if (prefix.size() == s.size()) {
      out_ += "<span class=\"text\">";
      text(s);
      out_ += "</span>";
      return;
    }
    out_ += "<details class=\"long\"><summary><span class=\"cut\">";
    text(prefix);
    out_ += fmt::format(" … ({} more bytes)</span></summary><span class=\"text\">",
                        s.size() - prefix.size());
    text(s);
    out_ += "</span></details>";
  }

  void pre(std::string_view s) {
    out_ += "<pre>\n";  // the parser drops one newline right after <pre>: this one
    text(s);
    out_ += "</pre>";
  }

  void head() {
    const auto& run = report_.run;
    out_ +=
        html::page_head(fmt::format("devshim · {} · run {} · {}", run.suite, run.id, run.status));
  }

  void env_row(std::string_view term, std::string_view value, std::string_view title = {}) {
    out_ += "<dt>";
    text(term);
    out_ += "</dt><dd";
    if (!title.empty()) {
      out_ += " title=\"";
      text(title);
      out_ += '"';
    }
    out_ += '>';
    text(value.empty() ? "—" : value);
    out_ += "</dd>\n";
  }

  void header() {
    const auto& run = report_.run;
    const auto& env = report_.environment;
    out_ += "<header class=\"run\" id=\"environment\">\n<h1>devshim report: <span class=\"suite\">";
    text(run.suite);
    out_ += fmt::format("</span> · run {} ", run.id);
    status_badge(run.status);
    out_ += "</h1>\n<dl class=\"environment\">\n";

    env_row("Suite", run.suite, run.suite_file);
    std::string targets;
    for (const auto& t : run.targets) targets += (targets.empty() ? "" : ", ") + t;
    env_row("Targets", targets.empty() ? "all tests" : targets);
    env_row("Mode", run.mode == "baseline" ? "baseline (shim off)" : run.mode);

    std::string project = run.project_root;
    if (!run.project_commit.empty()) project += " @ " + run.project_commit.substr(0, 12);
    env_row("Project", project, run.project_commit);
    if (!run.tests_dir.empty()) env_row("Tests folder", run.tests_dir);

    std::string python = env_text(env, "python");
    env_row("Python", python, env_text(env, "executable"));
    std::string torch = env_text(env, "torch");
    if (torch.empty() && env.is_object() && env.contains("torch")) {
      torch = "not importable";
      if (const std::string why = env_text(env, "torch_error"); !why.empty()) torch += ": " + why;
    }
    env_row("torch", torch);
    env_row("Accelerators", accelerators_text());
    env_row("Shim", shim_text());
    if (const std::string start = start_mode_text(env); !start.empty()) env_row("Start", start);
    if (const std::string probe = device_probe_text(env); !probe.empty()) {
      env_row("Device probe", probe);
    }
    std::string host = run.host;
    if (const std::string platform = env_text(env, "platform"); !platform.empty()) {
      host += (host.empty() ? "" : " · ") + platform;
    }
    env_row("Host", host);
    std::string cores = env_text(env, "cores");
    cores += fmt::format("{}{} worker{}", cores.empty() ? "" : " cores · ", run.jobs,
                         run.jobs == 1 ? "" : "s");
    env_row("Cores", cores);
    env_row("Started", run.started_at,
            run.finished_at.empty() ? "" : "finished " + run.finished_at);
    env_row("Duration", run.finished_at.empty() && report_.duration_s == 0
                            ? "still running"
                            : format_duration(report_.duration_s));
    std::string command;
    for (const auto& arg : run.command_line) {
      if (!command.empty()) command += ' ';
      command += shell_word(arg);
    }
    out_ += "<dt>Command line</dt><dd><code>";
    text(command.empty() ? "—" : command);
    out_ += "</code></dd>\n";
    if (const std::string probe = env_text(env, "probe_error"); !probe.empty()) {
      env_row("Probe error", probe);
    }
    later_runs();
    out_ += "</dl>\n</header>\n";
  }

  // The runs naming this one as previous run or baseline, each linked to its report.html (or .md).
  void later_runs() {
    if (report_.later_runs.empty()) return;
    out_ += "<dt>Later runs</dt><dd class=\"later-runs\">";
    bool first = true;
    for (const auto& l : report_.later_runs) {
      if (!first) out_ += " · ";
      first = false;
      link(l.html.empty() ? l.md : l.html, fmt::format("run {}", l.run),
           /*label_if_refused=*/true);
      out_ += " (";
      text(later_relation_text(l.relation));
      out_ += ")";
    }
    out_ += "</dd>\n";
  }

  std::string accelerators_text() const {
    const auto& env = report_.environment;
    std::string cuda = env_text(env, "cuda_available");
    std::string mps = env_text(env, "mps_available");
    if (cuda.empty() && mps.empty()) return "";
    if (const std::string n = env_text(env, "cuda_device_count"); cuda == "yes" && !n.empty()) {
      cuda += " (" + n + (n == "1" ? " device)" : " devices)");
    }
    return "CUDA: " + (cuda.empty() ? "unknown" : cuda) +
           " · MPS: " + (mps.empty() ? "unknown" : mps);
  }

  std::string shim_text() const {
    const auto& env = report_.environment;
    if (!env.is_object() || !env.contains("shim")) return "";
    const auto& shim = env["shim"];
    if (!shim.is_object()) return report_.run.mode == "baseline" ? "off (baseline)" : "not loaded";
    std::string s = env_text(shim, "name");
    if (const std::string v = env_text(shim, "version"); !v.empty()) s += " " + v;
    if (const std::string p = env_text(shim, "policy"); !p.empty()) s += " · policy " + p;
    if (const std::string a = env_text(shim, "active"); !a.empty()) {
      s += a == "yes" ? " · active" : " · inactive";
    }
    return s;
  }

  std::size_t file_error_count() const {
    return static_cast<std::size_t>(
        std::count_if(report_.files.begin(), report_.files.end(),
                      [](const ReportFile& f) { return f.error.has_value(); }));
  }

  void nav() {
    out_ += fmt::format(
        "<nav class=\"toc\" aria-label=\"Sections\"><a href=\"#environment\">Environment</a>{}{}{}"
        "<a href=\"#summary\">Summary</a><a href=\"#clusters\">Clusters ({})</a>"
        "<a href=\"#failures\">Failures ({})</a>{}<a href=\"#files\">Files ({})</a></nav>\n",
        report_.previous ? "<a href=\"#previous\">Changes</a>" : "",
        report_.flaky.empty()
            ? std::string()
            : fmt::format("<a href=\"#flaky\">Flaky ({})</a>", report_.flaky.size()),
        std::string(report_.cuda_path ? "<a href=\"#cuda-path\">CUDA path</a>" : "") +
            std::string(report_.differential ? "<a href=\"#differential\">Differential</a>" : "") +
            (file_error_count() == 0 ? std::string()
                                     : fmt::format("<a href=\"#file-errors\">File errors ({})</a>",
                                                   file_error_count())),
        report_.clusters.size(), rows_.size(),
        (report_.gaps.empty()
             ? std::string()
             : fmt::format("<a href=\"#gaps\">Gaps ({})</a>", report_.gaps.size())) +
            (show_redirections() ? fmt::format("<a href=\"#redirections\">Redirections ({})</a>",
                                               report_.redirections.size())
                                 : std::string()),
        report_.files.size());
  }

  void chips(const std::map<std::string, int>& counts, const std::string_view* order,
             std::size_t n) {
    out_ += "<ul class=\"chips\">";
    for (const auto& [status, count] : ordered_counts(counts, order, n)) {
      out_ += fmt::format("<li>{} ", count);
      status_badge(status);
      out_ += "</li>";
    }
    out_ += "</ul>";
  }

  // The run against its previous run: the class of every test, new failures and fixes listed.
  void previous() {
    if (report_.other_versions) {
      out_ += "<section id=\"previous\">\n<h2>Changes since the previous run</h2>\n<p>";
      text(other_versions_text(report_));
      out_ += "</p>\n</section>\n";
    }
    if (!report_.previous) return;
    const ReportPrevious& p = *report_.previous;
    out_ += fmt::format("<section id=\"previous\">\n<h2>{} run {}</h2>\n<p class=\"hint\">",
                        p.against ? "Compared with" : "Changes since", p.previous_run);
    text(p.against ? "the run chosen with --against (\"previous\" below means it), started " +
                         p.started_at
                   : "the previous run of the same suite, targets, mode and policy, started " +
                         p.started_at);
    out_ += "</p>\n";
    other_reports(p.against ? "other run's report" : "previous run's report", p.previous_run,
                  p.previous_md, p.previous_html);
    out_ +=
        "<table><thead><tr><th>Class</th><th>Tests</th><th>Meaning</th></tr></thead>"
        "<tbody>\n";
    for (const auto& [cls, meaning] : change_classes()) {
      auto it = p.counts.find(cls);
      out_ += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", cls,
                          it == p.counts.end() ? 0 : it->second, meaning);
    }
    out_ += "</tbody></table>\n";
    auto list = [&](const char* title, const std::vector<ReportPrevious::Change>& changes,
                    const char* none) {
      out_ += fmt::format("<h3>{}</h3>\n", title);
      if (changes.empty()) {
        out_ += fmt::format("<p>{}</p>\n", none);
        return;
      }
      out_ += "<ul class=\"regressions\">\n";
      for (const auto& c : changes) {
        test_item(c.file, c.classname, c.name, c.previous_status + " → " + c.status, c.links,
                  c.message);
      }
      out_ += "</ul>\n";
    };
    list("New failures", p.new_failures, "None: nothing fails that did not fail before.");
    folded_changes("Lost",
                   "In the previous run, missing from this one: their file stopped before "
                   "reporting them. Counted with the new failures.",
                   p.lost);
    list("Fixed", p.fixed, "None.");
    folded_changes("Missing from the previous run",
                   "Their file stopped before reporting them in the previous run: not compared "
                   "(neither new nor fixed).",
                   p.missing_before);
    out_ += "</section>\n";
  }

  // Tests of a run-to-run class under a heading and a hint, folded: every one of them; nothing
  // when there is none.
  void folded_changes(const char* title, const char* hint,
                      const std::vector<ReportPrevious::Change>& changes) {
    if (changes.empty()) return;
    out_ += fmt::format("<h3>{}</h3>\n<p class=\"hint\">", title);
    text(hint);
    out_ += "</p>\n";
    out_ += fmt::format("<details class=\"tests\"><summary>{} test{}</summary>\n", changes.size(),
                        changes.size() == 1 ? "" : "s");
    out_ += "<ul class=\"regressions\">\n";
    for (const auto& c : changes) {
      test_item(c.file, c.classname, c.name, c.previous_status + " → " + c.status, c.links,
                c.message);
    }
    out_ += "</ul>\n</details>\n";
  }

  // Tests that failed, then passed on a rerun (--rerun-failures), with every attempt.
  void flaky() {
    if (report_.flaky.empty()) return;
    out_ += fmt::format(
        "<section id=\"flaky\">\n<h2>Flaky tests <span class=\"count\">({})</span></h2>\n"
        "<p class=\"hint\">Failed, then passed on a rerun: not counted as failures.</p>\n"
        "<ul class=\"regressions\">\n",
        report_.flaky.size());
    for (const auto& f : report_.flaky) {
      out_ += "<li>";
      text(label(f.file, f.classname, f.name));
      out_ += " ";
      std::string attempts;
      for (const auto& a : f.attempts) {
        attempts += (attempts.empty() ? "" : " → ") + std::string(to_string(a.status));
      }
      text(attempts);
      out_ += " ";
      source_links(f.links);
      if (!f.attempts.empty() && !f.attempts.front().message.empty()) {
        out_ += "<br>";
        long_text(f.attempts.front().message);
      }
      out_ += "</li>\n";
    }
    out_ += "</ul>\n</section>\n";
  }

  // What a porter reads first (glance_lines): regressions, CUDA branches, the CUDA path.
  void glance() {
    const std::vector<GlanceLine> lines = glance_lines(report_);
    if (lines.empty()) return;
    out_ += "<section id=\"glance\" class=\"glance\">\n<h2>At a glance</h2>\n<ul>\n";
    for (const GlanceLine& l : lines) {
      out_ += "<li>";
      if (!l.head.empty()) {
        out_ += "<strong>";
        text(l.head);
        out_ += "</strong>";
      }
      text(l.rest);
      out_ += "</li>\n";
    }
    out_ += "</ul>\n</section>\n";
  }

  // Shim runs: the tests that took a CUDA path, and how they did (the run's headline).
  void cuda_path() {
    if (!report_.cuda_path) return;
    const ReportCudaPath& c = *report_.cuda_path;
    out_ += "<section id=\"cuda-path\">\n<h2>CUDA path</h2>\n<p>";
    text(cuda_path_text(c));
    out_ += "</p>\n";
    if (c.tests > 0) {
      out_ += fmt::format(
          "<table><thead><tr><th>Why</th><th>Tests</th></tr></thead><tbody>\n"
          "<tr><td>device work by the shim's record: a request naming CUDA placed tensors or "
          "modules while it set up or ran</td><td class=\"num\">{}</td></tr>\n"
          "<tr><td>fails in code of its own that runs only where CUDA is there (an <code>if "
          "torch.cuda.is_available():</code> block)</td><td class=\"num\">{}</td></tr>\n"
          "<tr><td>skipped without the shim, ran with it</td><td class=\"num\">{}</td></tr>\n"
          "<tr><td>new under the shim</td><td class=\"num\">{}</td></tr>\n"
          "<tr><td>only asked, not counted above: its one contact was a masqueraded query, "
          "seeding or stream</td><td class=\"num\">{}</td></tr>\n</tbody></table>\n",
          c.recorded, c.in_branch, c.unskipped, c.new_tests, c.asked);
    }
    out_ += "</section>\n";
  }

  // Differential runs: the class of every test (shim on vs. the baseline run), regressions
  // listed with their links.
  void differential() {
    if (!report_.differential) return;
    const ReportDifferential& d = *report_.differential;
    out_ += fmt::format(
        "<section id=\"differential\">\n<h2>Differential: shim on vs. baseline run {}</h2>\n",
        d.baseline_run);
    other_reports("baseline's report", d.baseline_run, d.baseline_md, d.baseline_html);
    out_ += "<table><thead><tr><th>Class</th><th>Tests</th><th>Meaning</th></tr></thead><tbody>\n";
    for (const auto& [cls, meaning] : differential_classes()) {
      auto it = d.counts.find(cls);
      out_ += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", cls,
                          it == d.counts.end() ? 0 : it->second,
                          html::escape(differential_meaning(d, cls, meaning)));
    }
    out_ += "</tbody></table>\n<h3>Regressions</h3>\n";
    if (d.regressions.empty()) {
      out_ += "<p>";
      text(no_listed_regression_text(d));
      out_ += "</p>\n";
    } else {
      diff_tests(d.regressions);
    }
    if (!d.regressions.empty() || !d.lost.empty()) {
      out_ += "<p>";
      text(regressions_by_gap_text(d));
      out_ += "</p>\n";
    }
    if (const std::string renumbered = renumbered_text(d); !renumbered.empty()) {
      out_ += "<p>";
      text(renumbered);
      out_ += "</p>\n";
    }
    if (!d.lost.empty()) {
      out_ += "<h3>Lost</h3>\n<p class=\"hint\">";
      text(
          "Reported by the baseline, missing from this run: their file failed, crashed or timed "
          "out before reporting them. They count as regressions.");
      out_ +=
          "</p>\n<table class=\"lost\"><thead><tr><th>File</th><th>Status</th>"
          "<th>Tests lost</th><th>Why</th></tr></thead><tbody>\n";
      for (const ReportFile& f : report_.files) {
        if (f.lost == 0) continue;
        out_ += "<tr><td class=\"path\">";
        name_text(f.file.path);
        out_ += "</td><td>";
        status_badge(f.status);
        out_ += fmt::format("</td><td class=\"num\">{}</td><td>", f.lost);
        long_text(missing_reason(&f.file, f.error));
        out_ += "</td></tr>\n";
      }
      out_ += "</tbody></table>\n";
      folded_tests("Lost tests", d.lost);
    }
    cuda_branch_failures(d);
    folded_tests("Unlocked", d.unlocked);
    folded_tests("Newly skipped", d.newly_skipped);
    folded_tests("Failing with and without the shim", d.broken_both);
    if (const std::string added = new_under_shim_text(d); !added.empty()) {
      out_ += "<h3>New under the shim</h3>\n<p>";
      text(added);
      out_ += "</p>\n";
      if (!d.new_failed.empty()) folded_tests("New under the shim, failing", d.new_failed);
    }
    out_ += "</section>\n";
  }

  // The tests that passed without the shim and fail on a CUDA path they took with it: the causes
  // with what to do, then each cause's tests, folded.
  void cuda_branch_failures(const ReportDifferential& d) {
    if (d.cuda_branch_failures.empty()) return;
    const std::size_t n = d.cuda_branch_failures.size();
    out_ += "<h3 id=\"cuda-branch-failures\">CUDA-branch failures</h3>\n<p class=\"hint\">";
    text(fmt::format(
        "{} test{} passed without the shim and fail{} with it on a CUDA path: under the shim {} "
        "did device work on CUDA, which the baseline, seeing no CUDA, could not, so the failing "
        "branch never ran without the shim. Not regressions; by cause, with what to do "
        "(severity: what a porter can do about it; a setting that can change the outcome is the "
        "gap entry's, under Gaps).",
        n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "it" : "they"));
    out_ +=
        "</p>\n<table class=\"causes\"><thead><tr><th>Cause</th><th>Tests</th><th>Severity</th>"
        "<th>What to do</th></tr></thead><tbody>\n";
    const auto by_cause = cuda_branch_failures_by_cause(d);
    for (const auto& [cause, count] : by_cause) {
      const CudaBranchCauseText& t = cuda_branch_cause_text(cause);
      out_ += "<tr><td>";
      text(t.title);
      out_ += fmt::format("</td><td class=\"num\">{}</td><td>", count);
      text(t.severity);
      out_ += "</td><td>";
      long_text(t.action);
      out_ += "</td></tr>\n";
    }
    out_ += "</tbody></table>\n";
    for (const auto& [cause, count] : by_cause) {
      out_ += fmt::format("<details class=\"tests\"><summary>{} · {} test{}</summary>\n",
                          html::escape(cuda_branch_cause_text(cause).title), count,
                          count == 1 ? "" : "s");
      out_ += "<ul class=\"regressions\">\n";
      for (const auto& g : d.cuda_branch_failures) {
        if (g.cause != cause) continue;
        test_item(g.file, g.classname, g.name,
                  g.baseline_status + " → " + g.status + (g.gap.empty() ? "" : " · " + g.gap),
                  g.links, g.message);
      }
      out_ += "</ul>\n</details>\n";
    }
  }

  // Tests of a differential class: file · test, baseline → shim status, links, message.
  void diff_tests(const std::vector<ReportDifferential::Test>& tests) {
    out_ += "<ul class=\"regressions\">\n";
    for (const auto& g : tests) {
      test_item(g.file, g.classname, g.name, g.baseline_status + " → " + g.status, g.links,
                g.message);
    }
    out_ += "</ul>\n";
  }

  // A test as its framework names it (runner/results/native_id.h).
  std::string label(const std::string& file, const std::string& classname,
                    const std::string& name) const {
    return test_label(report_.run, file, classname, name);
  }

  // One test of a list: its native id, its statuses, its links, its message below.
  void test_item(const std::string& file, const std::string& classname, const std::string& name,
                 const std::string& statuses, const SourceLinks& links,
                 const std::string& message) {
    out_ += "<li>";
    text(label(file, classname, name));
    out_ += " ";
    text(statuses);
    out_ += " ";
    source_links(links);
    if (!message.empty()) {
      out_ += "<br>";
      long_text(message);
    }
    out_ += "</li>\n";
  }

  // A differential class's tests under a heading, folded: every one of them.
  void folded_tests(const char* title, const std::vector<ReportDifferential::Test>& tests) {
    out_ += fmt::format("<h3>{}</h3>\n", title);
    if (tests.empty()) {
      out_ += "<p>None.</p>\n";
      return;
    }
    out_ += fmt::format("<details class=\"tests\"><summary>{} test{}</summary>\n", tests.size(),
                        tests.size() == 1 ? "" : "s");
    diff_tests(tests);
    out_ += "</details>\n";
  }

  // "The baseline's report (run 3): report.html · report.md", when they are there.
  void other_reports(const char* what, std::int64_t run, const std::string& md,
                     const std::string& html) {
    if (md.empty() && html.empty()) return;
    out_ += fmt::format("<p class=\"hint\">The {} (run {}): ", what, run);
    const bool linked = link(html, "report.html");
    if (linked && !md.empty()) out_ += " · ";
    link(md, "report.md");
    out_ += "</p>\n";
  }

  // Files that reported no test: the exception that stopped each and where it happened.
  void file_errors() {
    const std::size_t n = file_error_count();
    if (n == 0) return;
    const bool lost = report_.differential.has_value();
    out_ += fmt::format(
        "<section id=\"file-errors\">\n<h2>File errors <span class=\"count\">({})</span></h2>\n"
        "<p class=\"hint\">Files that reported no test, and what stopped each.</p>\n"
        "<table class=\"file-errors\">\n<thead><tr><th>File</th><th>Status</th><th>Error</th>"
        "<th>Where (innermost first)</th>{}<th>Log</th></tr></thead>\n<tbody>\n",
        n, lost ? "<th>Tests lost</th>" : "");
    for (const ReportFile& f : report_.files) {
      if (!f.error) continue;
      out_ += "<tr><td class=\"path\">";
      name_text(f.file.path);
      out_ += "</td><td>";
      status_badge(f.status);
      out_ += "</td><td>";
      long_text(file_error_text(*f.error));
      out_ += "</td><td>";
      std::string where;
      for (const TracebackFrame& frame : f.error->frames) {
        where += (where.empty() ? "" : "\n") + frame_text(frame);
      }
      long_text(where);
      out_ += "</td>";
      if (lost) out_ += fmt::format("<td class=\"num\">{}</td>", f.lost);
      out_ += "<td><span class=\"links\">";
      link(f.log_link, "log");
      out_ += "</span></td></tr>\n";
    }
    out_ += "</tbody>\n</table>\n</section>\n";
  }

  void summary() {
    const auto& s = report_.summary;
    out_ += "<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"summary\">\n";
    out_ +=
        fmt::format("<div class=\"card\"><h3>Tests</h3><div class=\"big\">{}</div>", s.tests_total);
    chips(s.tests, kCaseStatusOrder.data(), kCaseStatusOrder.size());
    out_ += "<div class=\"bar\" role=\"img\" aria-label=\"tests by status\">";
    for (const auto& [status, count] :
         ordered_counts(s.tests, kCaseStatusOrder.data(), kCaseStatusOrder.size())) {
      out_ += fmt::format("<span class=\"status-{}\" style=\"flex-grow:{}\" title=\"",
                          status_class(status), count);
      text(fmt::format("{} {}", count, status));
      out_ += "\"></span>";
    }
    out_ += "</div></div>\n";
    out_ += fmt::format(
        "<div class=\"card\"><h3>Pass rate</h3><div class=\"big\">{:.1f} %</div>"
        "<p class=\"hint\">passed ÷ tests that ran to a verdict (skipped and xfailed left out)"
        "</p></div>\n",
        s.pass_rate * 100);
    out_ += fmt::format("<div class=\"card\"><h3>Test files</h3><div class=\"big\">{}</div>",
                        s.files_total);
    chips(s.files, kFileStatusOrder.data(), kFileStatusOrder.size());
    out_ += "</div>\n</div>\n</section>\n";
  }

  void clusters() {
    const auto& clusters = report_.clusters;
    out_ += fmt::format(
        "<section id=\"clusters\">\n<h2>Failure clusters <span class=\"count\">({})</span></h2>\n",
        clusters.size());
    if (clusters.empty()) {
      out_ += "<p class=\"empty\">No failure to group.</p>\n</section>\n";
      return;
    }
    out_ +=
        "<p class=\"hint\">Failures that share a normalised signature (numbers, addresses, paths"
        " and device indices abstracted), biggest first.</p>\n<ol class=\"clusters\">\n";
    for (std::size_t i = 0; i < clusters.size(); ++i) {
      const auto& c = clusters[i];
      out_ += fmt::format(
          "<li class=\"cluster\" id=\"cluster-{}\"><h3><span class=\"count\">#{}</span> {} "
          "test{}",
          i + 1, i + 1, c.tests.size(), c.tests.size() == 1 ? "" : "s");
      if (!c.exception.empty()) {  // none for GoogleTest: the message below names the failure
        out_ += " · <code class=\"exception\">";
        text(c.exception);
        out_ += "</code>";
      }
      out_ += "</h3>\n<div class=\"message mono\">";
      long_text(c.message);
      out_ += "</div>\n";
      if (!c.example_message.empty() || !c.example_traceback.empty()) {
        out_ += "<details class=\"example\"><summary>Example message and traceback</summary>\n";
        if (!c.example_message.empty()) pre(c.example_message);
        if (!c.example_traceback.empty()) pre(c.example_traceback);
        out_ += "</details>\n";
      }
      out_ += fmt::format("<details class=\"tests\"{}><summary>{} affected test{}</summary><ul>",
                          c.tests.size() <= kOpenTestLists ? " open" : "", c.tests.size(),
                          c.tests.size() == 1 ? "" : "s");
      for (const auto& t : c.tests) {
        out_ += "<li>";
        const std::string id = label(t.file, t.classname, t.name);
        const auto row = row_index_.find(test_key(t.file, t.classname, t.name));
        if (row != row_index_.end()) {
          out_ += fmt::format("<a href=\"#failure-{}\">", row->second);
          text(id);
          out_ += "</a>";
        } else {
          text(id);
        }
        source_links(t.links);
        out_ += "</li>";
      }
      out_ += "</ul></details>\n</li>\n";
    }
    out_ += "</ol>\n</section>\n";
  }

  void failures() {
    out_ += fmt::format(
        "<section id=\"failures\">\n<h2>Failures <span class=\"count\">({})</span></h2>\n",
        rows_.size());
    if (rows_.empty()) {
      out_ += "<p class=\"empty\">No test failed.</p>\n</section>\n";
      return;
    }
    out_ += fmt::format(
        "<div class=\"filter\"><label for=\"failure-filter\">Filter</label>"
        "<input id=\"failure-filter\" type=\"search\" autocomplete=\"off\" spellcheck=\"false\""
        " placeholder=\"words in file, test or message\">"
        "<output id=\"filter-count\" for=\"failure-filter\">{} failing</output></div>\n",
        rows_.size());
    out_ +=
        "<table id=\"failures-table\" class=\"failures\">\n<colgroup><col class=\"c-status\">"
        "<col class=\"c-file\"><col class=\"c-test\"><col class=\"c-message\">"
        "<col class=\"c-cluster\"><col class=\"c-links\"></colgroup>\n"
        "<thead><tr><th>Status</th><th>File</th><th>Test</th><th>Message</th><th>Cluster</th>"
        "<th>Links</th></tr></thead>\n<tbody>\n";
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const auto& row = rows_[i];
      out_ += fmt::format("<tr id=\"failure-{}\" class=\"failure\"><td>", i + 1);
      if (row.test == nullptr) {
        status_badge(row.file->status);
        out_ += "</td><td class=\"path\">";
        name_text(row.file->file.path);
        out_ += "</td><td class=\"test\"><i>whole file</i></td><td class=\"message\">";
        long_text(row.file->file.note.empty() ? "no test result: see the log"
                                              : row.file->file.note);
        out_ += "</td><td></td><td><span class=\"links\">";
        link(row.file->log_link, "log");
        out_ += "</span></td></tr>\n";
        continue;
      }
      const TestCase& t = row.test->test;
      status_badge(to_string(t.status));
      if (row.test->cuda_path) out_ += "<span class=\"cuda-path\">CUDA path</span>";
      out_ += "</td><td class=\"path\">";
      name_text(row.file->file.path);
      out_ += "</td><td class=\"test\">";
      const TestIds ids = test_ids(report_.run, row.file->file.path, t.classname, t.name);
      out_ += "<span class=\"name\">";
      name_text(ids.native);
      out_ += "</span>";
      if (const std::string command = rerun_command(report_.run, ids); !command.empty()) {
        out_ += "<details class=\"rerun\"><summary>re-run</summary><code>";
        text(command);
        out_ += "</code></details>";
      }
      out_ += "</td><td class=\"message\">";
      std::string message = t.exception;
      if (!t.message.empty()) message += (message.empty() ? "" : ": ") + t.message;
      if (!t.culprit.empty()) message += (message.empty() ? "" : " ") + ("[" + t.culprit + "]");
      long_text(message);
      out_ += "</td><td>";
      if (const auto it = cluster_index_.find(row.test->signature); it != cluster_index_.end()) {
        out_ += fmt::format("<a href=\"#cluster-{}\">#{}</a>", it->second, it->second);
      }
      out_ += "</td><td>";
      source_links(row.test->links);
      out_ += "<span class=\"links\">";
      link(row.file->log_link, "log");
      link(row.test->test_page, "history");
      out_ += "</span></td></tr>\n";
    }
    out_ += "</tbody>\n</table>\n</section>\n";
  }

  // A gap entry's tests of this run, one a line, as their framework names them.
  void affected_tests(const GapEntry& g) {
    std::string tests;
    for (const auto& t : g.test_list) {
      tests += (tests.empty() ? "" : "\n") + label(t.file, t.classname, t.name);
    }
    long_text(tests);
  }

  void gaps() {
    const auto& list = report_.gaps;
    if (list.empty()) return;
    out_ += fmt::format(
        "<section id=\"gaps\">\n<h2>Gaps <span class=\"count\">({})</span></h2>\n"
        "<p class=\"hint\">Torch APIs this run's failures under the shim are attributed to "
        "(<code>runner gaps</code>).</p>\n"
        "<table class=\"gaps\">\n<thead><tr><th>API</th><th>Kind</th><th>Status</th>"
        "<th>Severity</th><th>Tests</th><th>Action</th><th>Affected tests</th></tr></thead>\n"
        "<tbody>\n",
        list.size());
    for (const auto& g : list) {
      out_ += "<tr><td class=\"path\">";
      text(g.api);
      out_ += "</td><td>";
      text(g.kind);
      out_ += "</td><td>";
      text(g.status);
      out_ += "</td><td>";
      text(g.severity);
      out_ += fmt::format("</td><td class=\"num\">{}</td><td>", g.tests);
      std::string action = g.action;
      if (!g.equivalent.empty()) action += "\nequivalent: " + g.equivalent;
      if (!g.trial.setting.empty()) action += "\ntrial: " + gap_trial_text(g.trial);
      long_text(action);
      out_ += "</td><td>";
      affected_tests(g);
      out_ += "</td></tr>\n";
    }
    out_ += "</tbody>\n</table>\n</section>\n";
  }

  // What fails the same way without the shim: the suite's environment, not a shim gap.
  void environment_entries() {
    const auto& list = report_.environment_entries;
    if (list.empty()) return;
    out_ += fmt::format(
        "<section id=\"environment-entries\">\n<h2>Environment <span class=\"count\">({})</span>"
        "</h2>\n<p class=\"hint\">What fails the same way without the shim: the suite's "
        "environment, not a shim gap.</p>\n<table class=\"gaps\">\n<thead><tr><th>Error</th>"
        "<th>Files</th><th>Action</th><th>Affected</th></tr></thead>\n<tbody>\n",
        list.size());
    for (const auto& g : list) {
      out_ += "<tr><td class=\"path\">";
      text(g.api);
      out_ += fmt::format("</td><td class=\"num\">{}</td><td>", g.files);
      long_text(g.action);
      out_ += "</td><td>";
      affected_tests(g);
      out_ += "</td></tr>\n";
    }
    out_ += "</tbody>\n</table>\n</section>\n";
  }

  bool show_redirections() const {
    return report_.run.mode == "shim" || !report_.redirections.empty();
  }

  void redirections() {
    if (!show_redirections()) return;
    const auto& list = report_.redirections;
    out_ += fmt::format(
        "<section id=\"redirections\">\n<h2>Redirections <span class=\"count\">({})</span></h2>\n",
        list.size());
    if (list.empty()) {
      out_ +=
          "<p class=\"empty\">None recorded: no test asked the shim for a device it "
          "rewrote.</p>\n</section>\n";
      return;
    }
    out_ +=
        "<p class=\"hint\">Device requests the shim rewrote, summed over the run's test files; "
        "the link goes to the first call site.</p>\n"
        "<table class=\"redirections\">\n<thead><tr><th>API</th><th>Requested → used</th>"
        "<th>Calls</th><th>Files</th><th>Call sites</th><th>First call site</th></tr></thead>\n"
        "<tbody>\n";
    for (const auto& d : list) {
      out_ += "<tr><td class=\"path\">";
      text(d.api);
      out_ += "</td><td>";
      text(d.requested);
      out_ += " → ";
      text(d.used);
      out_ += fmt::format(
          "</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"path\">",
          d.count, d.files, d.sites);
      if (!d.first_site.path.empty()) {
        text(d.first_site.line > 0 ? fmt::format("{}:{}", d.first_site.path, d.first_site.line)
                                   : d.first_site.path);
        out_ += " ";
        source_links(d.links);
      }
      out_ += "</td></tr>\n";
    }
    out_ += "</tbody>\n</table>\n</section>\n";
  }

  void file_table(const std::vector<const ReportFile*>& files) {
    out_ +=
        "<table class=\"files\">\n<colgroup><col class=\"c-status\"><col class=\"c-file\">"
        "<col class=\"c-counts\"><col class=\"c-dur\"><col class=\"c-log\"><col class=\"c-note\">"
        "</colgroup>\n<thead><tr><th>Status</th><th>File</th><th>Tests</th><th>Duration</th>"
        "<th>Log</th><th>Note</th></tr></thead>\n<tbody>\n";
    for (const ReportFile* f : files) {
      out_ += "<tr><td>";
      status_badge(f->status);
      out_ += "</td><td class=\"path\">";
      name_text(f->file.path);
      out_ += "</td><td>";
      std::string counts;
      for (const auto& [status, count] :
           ordered_counts(f->counts, kCaseStatusOrder.data(), kCaseStatusOrder.size())) {
        counts += fmt::format("{}{} {}", counts.empty() ? "" : " · ", count, status);
      }
      text(counts.empty() ? "—" : counts);
      out_ += "</td><td class=\"num\">";
      text(f->status == "not_run" ? "—" : format_duration(f->file.duration_s));
      out_ += "</td><td>";
      link(f->log_link, "log");
      out_ += "</td><td class=\"note\">";
      std::string note = f->file.note;
      if (f->file.signal) {
        note += fmt::format("{}signal {}", note.empty() ? "" : " · ", *f->file.signal);
      } else if (f->file.exit_code && *f->file.exit_code != 0 && f->status != "passed" &&
                 f->status != "failed") {
        note += fmt::format("{}exit {}", note.empty() ? "" : " · ", *f->file.exit_code);
      }
      if (!note.empty()) long_text(note);
      out_ += "</td></tr>\n";
    }
    out_ += "</tbody>\n</table>\n";
  }

  void files() {
    std::vector<const ReportFile*> other;
    std::vector<const ReportFile*> passed;
    for (const auto& f : report_.files) (f.status == "passed" ? passed : other).push_back(&f);
    out_ += fmt::format(
        "<section id=\"files\">\n<h2>Test files <span class=\"count\">({})</span></h2>\n",
        report_.files.size());
    if (report_.files.empty()) {
      out_ += "<p class=\"empty\">No test file in this run.</p>\n";
    }
    if (!other.empty()) file_table(other);
    if (!passed.empty()) {
      out_ += fmt::format("<details class=\"passed-files\"><summary>{} passed file{}</summary>\n",
                          passed.size(), passed.size() == 1 ? "" : "s");
      file_table(passed);
      out_ += "</details>\n";
    }
    out_ += "</section>\n";
  }

  void footer() {
    out_ += "<footer>Rendered by devshim runner ";
    text(env_text(report_.environment, "runner_version"));
    out_ += fmt::format(" from run {}", report_.run.id);
    if (!report_.run.out_dir.empty()) {
      out_ += " (";
      text(report_.run.out_dir);
      out_ += ')';
    }
    out_ += ".</footer>\n";
  }

  const Report& report_;
  std::vector<FailureRow> rows_;
  std::unordered_map<std::string, std::size_t> cluster_index_;  ///< signature → 1-based
  std::unordered_map<std::string, std::size_t> row_index_;      ///< test_key → 1-based row
  std::string out_;
};

}  // namespace

std::string render_html(const Report& report) { return Page(report).render(); }

}  // namespace devshim
