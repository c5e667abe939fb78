#include "reports/markdown.h"

#include <fmt/format.h>

#include <functional>

#include "parsers/line_reader.h"
#include "parsers/text.h"
#include "reports/report_text.h"
#include "runner/results/native_id.h"
#include "runner/results/status.h"

namespace devshim {

namespace {

// Cuts s at max_chars bytes without splitting a UTF-8 sequence.
std::string_view cut(std::string_view s, std::size_t max_chars, bool& cut_off) {
  cut_off = s.size() > max_chars;
  return cut_utf8(s, max_chars);
}

}  // namespace

std::string md_link(const std::string& text, const std::string& href) {
  if (href.empty()) return text;
  // Targets come from the model (relative paths, http(s) URLs) and hold paths from tests: spaces,
  // parentheses, brackets, `<>`, backslashes and backticks would end or escape the link target,
  // `|` and line breaks the table row it sits in (found by fuzz/report_fuzz).
  std::string target;
  for (char c : href) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F || c == '(' || c == ')' || c == '[' || c == ']' || c == '<' ||
        c == '>' || c == '|' || c == '\\' || c == '`') {
      target += fmt::format("%{:02X}", u);
    } else {
      target += c;
    }
  }
  return fmt::format("[{}]({})", text, target);
}

namespace {

std::string source_cell(const SourceLinks& links, const SourceLocation& loc) {
  if (loc.path.empty()) return "";
  std::string where = md_cell(loc.line > 0 ? fmt::format("{}:{}", loc.path, loc.line) : loc.path);
  std::string s = md_link(where, links.local);
  if (!links.upstream.empty()) s += " " + md_link("upstream", links.upstream);
  return s;
}

std::string counts_or_none(const std::map<std::string, int>& counts) {
  std::string s = counts_text(counts);
  return s.empty() ? "none" : s;
}

std::string env_string(const nlohmann::json& env, const char* key, const char* fallback = "?") {
  auto it = env.find(key);
  if (it == env.end() || it->is_null()) return fallback;
  return it->is_string() ? it->get<std::string>() : it->dump();
}

void environment_section(const Report& r, std::string& out) {
  const auto& e = r.environment;
  std::string accelerators = "none";
  if (e.value("cuda_available", false)) {
    accelerators = fmt::format("CUDA ({} devices)", e.value("cuda_device_count", 0));
  } else if (e.value("mps_available", false)) {
    accelerators = "MPS";
  }
  std::string shim = r.run.mode == "baseline" ? "off (baseline run)" : "on";
  if (auto s = e.find("shim"); s != e.end() && s->is_object()) {
    shim =
        fmt::format("{} {}, policy {}{}", s->value("name", "devshim"), s->value("version", "?"),
                    s->value("policy", "default"), s->value("active", false) ? "" : ", inactive");
  }
  std::string targets;
  for (const auto& t : r.run.targets) targets += (targets.empty() ? "" : " ") + t;
  std::string command;
  for (const auto& a : r.run.command_line) command += (command.empty() ? "" : " ") + a;
  out += "| | |\n| --- | --- |\n";
  auto row = [&](const char* k, const std::string& v) {
    out += fmt::format("| {} | {} |\n", k, md_cell(v, 500));
  };
  row("Suite", r.run.suite);
  row("Status", r.run.status);
  row("Mode", r.run.mode);
  row("Targets", targets.empty() ? "(all)" : targets);
  row("Project", r.run.project_root + (r.run.project_commit.empty()
                                           ? std::string()
                                           : " @ " + r.run.project_commit.substr(0, 12)));
  row("Python", env_string(e, "python") + " (" + env_string(e, "executable") + ")");
  row("torch", env_string(e, "torch", "not importable"));
  row("Accelerators", accelerators);
  row("Shim", shim);
  if (const std::string start = start_mode_text(e); !start.empty()) row("Start", start);
  if (const std::string probe = device_probe_text(e); !probe.empty()) row("Device probe", probe);
  row("Host", fmt::format("{}, {} cores, -j {}", r.run.host, env_string(e, "cores"), r.run.jobs));
  row("Started", r.run.started_at);
  row("Duration", r.duration_s > 0 ? fmt::format("{:.0f} s", r.duration_s) : "-");
  row("Command", command);
  if (!r.later_runs.empty()) {
    std::string later;
    for (const auto& l : r.later_runs) {
      std::string links;
      if (!l.md.empty()) links += md_link("report.md", l.md);
      if (!l.html.empty()) links += (links.empty() ? "" : " · ") + md_link("report.html", l.html);
      later += fmt::format("{}run {} ({}){}", later.empty() ? "" : "; ", l.run,
                           later_relation_text(l.relation), links.empty() ? "" : ": " + links);
    }
    out += fmt::format("| Later runs | {} |\n", later);
  }
}

std::string attempts_text(const std::vector<CaseAttempt>& attempts) {
  std::string s;
  for (const auto& a : attempts) s += (s.empty() ? "" : " → ") + std::string(to_string(a.status));
  return s;
}

// A line linking the other run's reports, when they are there.
std::string other_reports(const char* what, std::int64_t run, const std::string& md,
                          const std::string& html) {
  if (md.empty() && html.empty()) return "";
  std::string links;
  if (!md.empty()) links += md_link("report.md", md);
  if (!html.empty()) links += (links.empty() ? "" : " · ") + md_link("report.html", html);
  return fmt::format("The {} (run {}): {}\n\n", what, run, links);
}

// Tests of a run-to-run class, folded, at most kListedRowsMax rows (listed_tests' twin).
void folded_changes(const RunRecord& run, const std::vector<ReportPrevious::Change>& list,
                    std::string& out);

// Changes since the previous run (first when there is one), then the flaky tests.
void previous_section(const Report& r, std::string& out) {
  if (r.other_versions) {
    out += "\n## Changes since the previous run\n\n" + other_versions_text(r) + "\n";
  }
  if (r.previous) {
    const ReportPrevious& p = *r.previous;
    if (p.against) {
      out += fmt::format(
          "\n## Compared with run {} ({})\n\nThe run chosen with `--against`; \"previous run\" "
          "below means that run.\n\n",
          p.previous_run, p.started_at);
    } else {
      out += fmt::format("\n## Changes since run {} ({})\n\n", p.previous_run, p.started_at);
    }
    out += other_reports(p.against ? "other run's report" : "previous run's report", p.previous_run,
                         p.previous_md, p.previous_html);
    out += "| class | tests | meaning |\n| --- | --- | --- |\n";
    for (const auto& [cls, meaning] : change_classes()) {
      auto it = p.counts.find(cls);
      out += fmt::format("| {} | {} | {} |\n", cls, it == p.counts.end() ? 0 : it->second, meaning);
    }
    auto table = [&](const std::vector<ReportPrevious::Change>& list, const char* none) {
      if (list.empty()) {
        out += none;
        return;
      }
      out += "| test | before → now | message | source |\n| --- | --- | --- | --- |\n";
      for (const auto& c : list) {
        out += fmt::format(
            "| {} | {} → {} | {} | {} |\n", md_cell(test_label(r.run, c.file, c.classname, c.name)),
            c.previous_status, c.status, md_cell(c.message, 200), md_source_link(c.links));
      }
    };
    out += "\n### New failures\n\n";
    table(p.new_failures, "None: nothing fails that did not fail in the previous run.\n");
    if (!p.lost.empty()) {
      out += fmt::format(
          "\n### Lost\n\n{} test{} of the previous run {} missing from this one: {} file "
          "stopped before reporting them. Counted with the new failures.\n\n",
          p.lost.size(), p.lost.size() == 1 ? "" : "s", p.lost.size() == 1 ? "is" : "are",
          p.lost.size() == 1 ? "its" : "their");
      folded_changes(r.run, p.lost, out);
    }
    out += "\n### Fixed\n\n";
    table(p.fixed, "None.\n");
    if (!p.missing_before.empty()) {
      out += fmt::format(
          "\n### Missing from the previous run\n\n{} test{} {} missing from the previous run, "
          "whose file stopped before reporting them there: not compared (neither new nor "
          "fixed).\n\n",
          p.missing_before.size(), p.missing_before.size() == 1 ? "" : "s",
          p.missing_before.size() == 1 ? "was" : "were");
      folded_changes(r.run, p.missing_before, out);
    }
  }
  if (!r.flaky.empty()) {
    out += fmt::format(
        "\n## Flaky tests\n\n{} test{} failed, then passed on a rerun: not "
        "counted as failures.\n\n",
        r.flaky.size(), r.flaky.size() == 1 ? "" : "s");
    out += "| test | attempts | first failure | source |\n| --- | --- | --- | --- |\n";
    for (const auto& f : r.flaky) {
      const std::string first = f.attempts.empty() ? "" : f.attempts.front().message;
      out += fmt::format("| {} | {} | {} | {} |\n",
                         md_cell(test_label(r.run, f.file, f.classname, f.name)),
                         attempts_text(f.attempts), md_cell(first, 200), md_source_link(f.links));
    }
  }
}

}  // namespace

std::string md_source_link(const SourceLinks& links) {
  std::string src = links.local.empty() ? "" : md_link("source", links.local);
  if (!links.upstream.empty()) src += " " + md_link("upstream", links.upstream);
  return src;
}

std::string md_cell(std::string_view text, std::size_t max_chars) {
  bool cut_off = false;
  std::string clean = sanitize_text(text);
  std::string_view s = cut(clean, max_chars, cut_off);
  std::string out;
  out.reserve(s.size() + 8);
  bool space = false;
  for (char c : s) {
    if (c == '\n' || c == '\r' || c == '\t') {
      if (!space) out += ' ';
      space = true;
      continue;
    }
    space = false;
    switch (c) {
      case '|':
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
        out += '\\';
        out += c;
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        out += c;
    }
  }
  if (cut_off) out += "…";
  return out;
}

std::string md_code_block(std::string_view text, std::size_t max_chars) {
  bool cut_off = false;
  std::string clean = sanitize_text(text);
  std::string body(cut(clean, max_chars, cut_off));
  if (cut_off) body += "\n… (cut; the whole text is in the log)";
  std::size_t longest = 0;
  std::size_t run = 0;
  for (char c : body) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  return fmt::format("{}text\n{}\n{}\n", fence, body, fence);
}

// At most this many rows in each folded per-test list of report.md; report.html and
// report.json list every test.
constexpr std::size_t kListedRowsMax = 100;

// One row of a folded test list: the test, its statuses, message and links.
std::string test_row(const RunRecord& run, const std::string& file, const std::string& classname,
                     const std::string& name, const std::string& before, const std::string& now,
                     const std::string& message, const SourceLinks& links) {
  return fmt::format("| {} | {} → {} | {} | {} |\n",
                     md_cell(test_label(run, file, classname, name)), before, now,
                     md_cell(message, 200), md_source_link(links));
}

// n tests folded, at most kListedRowsMax rows (row(i): the i-th); statuses names the status
// column, every says what lists every test.
void folded_table(std::size_t n, const char* statuses,
                  const std::function<std::string(std::size_t)>& row, const char* every,
                  std::string& out) {
  out += fmt::format("<details><summary>{} test{}</summary>\n\n", n, n == 1 ? "" : "s");
  out += fmt::format("| test | {} | message | source |\n| --- | --- | --- | --- |\n", statuses);
  for (std::size_t i = 0; i < n && i < kListedRowsMax; ++i) out += row(i);
  if (n > kListedRowsMax) {
    out += fmt::format("\n… and {} more: {} list every test.\n", n - kListedRowsMax, every);
  }
  out += "\n</details>\n";
}

// The tests of one differential class, folded, at most kListedRowsMax rows.
void listed_tests_body(const RunRecord& run, const std::vector<ReportDifferential::Test>& tests,
                       std::string& out) {
  folded_table(
      tests.size(), "baseline → shim",
      [&](std::size_t i) {
        const auto& t = tests[i];
        return test_row(run, t.file, t.classname, t.name, t.baseline_status, t.status, t.message,
                        t.links);
      },
      "report.html and report.json (`diff_class`)", out);
}

// The tests of one differential class under a heading (none: what it says without tests).
void listed_tests(const RunRecord& run, const char* title,
                  const std::vector<ReportDifferential::Test>& tests, const char* none,
                  std::string& out) {
  out += fmt::format("\n### {}\n\n", title);
  if (tests.empty()) {
    out += none;
    return;
  }
  listed_tests_body(run, tests, out);
}

namespace {

void folded_changes(const RunRecord& run, const std::vector<ReportPrevious::Change>& list,
                    std::string& out) {
  folded_table(
      list.size(), "before → now",
      [&](std::size_t i) {
        const auto& c = list[i];
        return test_row(run, c.file, c.classname, c.name, c.previous_status, c.status, c.message,
                        c.links);
      },
      "report.html and report.json", out);
}

// The lost tests of a differential run: how many each file lost and why, then the tests folded.
void lost_section(const ReportDifferential& d, const Report& r, std::string& out) {
  if (d.lost.empty()) return;
  out += fmt::format(
      "\n### Lost\n\n{} test{} the baseline reported {} missing from this run: {} file "
      "failed, crashed or timed out before reporting them. {} as regressions.\n\n",
      d.lost.size(), d.lost.size() == 1 ? "" : "s", d.lost.size() == 1 ? "is" : "are",
      d.lost.size() == 1 ? "its" : "their", d.lost.size() == 1 ? "It counts" : "They count");
  out += "| file | status | tests lost | why |\n| --- | --- | --- | --- |\n";
  for (const ReportFile& f : r.files) {
    if (f.lost == 0) continue;
    out += fmt::format("| {} | {} | {} | {} |\n", md_cell(f.file.path), f.status, f.lost,
                       md_cell(missing_reason(&f.file, f.error), 200));
  }
  out += "\n";
  listed_tests_body(r.run, d.lost, out);
}

// The tests that passed without the shim and fail on a CUDA path they took with it: by cause, each
// cause with what to do, then each cause's tests.
void cuda_branch_section(const ReportDifferential& d, const Report& r, std::string& out) {
  if (d.cuda_branch_failures.empty()) return;
  const std::size_t n = d.cuda_branch_failures.size();
  out += fmt::format(
      "\n### CUDA-branch failures\n\n{} test{} passed without the shim and fail{} with it on a "
      "CUDA path: under the shim {} did device work on CUDA, which the baseline, seeing no CUDA, "
      "could not, so the failing branch never ran without the shim. Not regressions; by cause, "
      "with what to do (severity: what a porter can do about it; a setting that can change the "
      "outcome is the gap entry's, under Gaps):\n\n",
      n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "it" : "they");
  out += "| cause | tests | severity | what to do |\n| --- | --- | --- | --- |\n";
  const auto by_cause = cuda_branch_failures_by_cause(d);
  for (const auto& [cause, count] : by_cause) {
    const CudaBranchCauseText& text = cuda_branch_cause_text(cause);
    out += fmt::format("| {} | {} | {} | {} |\n", text.title, count, text.severity,
                       md_cell(text.action, 400));
  }
  for (const auto& [cause, count] : by_cause) {
    out += fmt::format("\n**{}**\n\n", md_cell(cuda_branch_cause_text(cause).title));
    std::vector<const ReportDifferential::Test*> tests;
    for (const auto& t : d.cuda_branch_failures) {
      if (t.cause == cause) tests.push_back(&t);
    }
    folded_table(
        tests.size(), "gap entry",
        [&](std::size_t i) {
          const auto& t = *tests[i];
          return fmt::format("| {} | {} | {} | {} |\n",
                             md_cell(test_label(r.run, t.file, t.classname, t.name)),
                             md_cell(t.gap), md_cell(t.message, 200), md_source_link(t.links));
        },
        "report.html and report.json (`cuda_branch_failures`)", out);
  }
}

}  // namespace

// The baseline comparison of a differential run: classes, the regressions and the lost tests,
// then the tests the shim unlocked, newly skips, or fails with and without it.
void differential_section(const Report& r, std::string& out) {
  if (!r.differential) return;
  const ReportDifferential& d = *r.differential;
  out += fmt::format("\n## Differential: shim on vs. baseline run {}\n\n", d.baseline_run);
  out += other_reports("baseline's report", d.baseline_run, d.baseline_md, d.baseline_html);
  out += "| class | tests | meaning |\n| --- | --- | --- |\n";
  for (const auto& [cls, meaning] : differential_classes()) {
    auto it = d.counts.find(cls);
    out += fmt::format("| {} | {} | {} |\n", cls, it == d.counts.end() ? 0 : it->second,
                       differential_meaning(d, cls, meaning));
  }
  out += "\n### Regressions\n\n";
  if (d.regressions.empty()) {
    out += no_listed_regression_text(d) + "\n";
  } else {
    out += "| test | baseline → shim | message | gap | source |\n| --- | --- | --- | --- | --- |\n";
    for (const auto& g : d.regressions) {
      out +=
          fmt::format("| {} | {} → {} | {} | {} | {} |\n",
                      md_cell(test_label(r.run, g.file, g.classname, g.name)), g.baseline_status,
                      g.status, md_cell(g.message, 200), md_cell(g.gap), md_source_link(g.links));
    }
  }
  if (!d.regressions.empty() || !d.lost.empty()) {
    out +=
        "\n" + regressions_by_gap_text(d, [](const std::string& g) { return md_cell(g); }) + "\n";
  }
  if (const std::string renumbered = renumbered_text(d); !renumbered.empty()) {
    out += "\n" + renumbered + "\n";
  }
  lost_section(d, r, out);
  cuda_branch_section(d, r, out);
  listed_tests(r.run, "Unlocked", d.unlocked, "None.\n", out);
  listed_tests(r.run, "Newly skipped", d.newly_skipped, "None.\n", out);
  listed_tests(r.run, "Failing with and without the shim", d.broken_both, "None.\n", out);
  if (const std::string added = new_under_shim_text(d); !added.empty()) {
    out += "\n### New under the shim\n\n" + added + "\n";
    if (!d.new_failed.empty()) {
      out += "\nFailing:\n\n";
      listed_tests_body(r.run, d.new_failed, out);
    }
  }
}

// The headline of a shim run: the tests that took a CUDA path, and how they did.
void cuda_path_section(const Report& r, std::string& out) {
  if (!r.cuda_path) return;
  const ReportCudaPath& c = *r.cuda_path;
  out += "\n## CUDA path\n\n" + cuda_path_text(c) + "\n";
  if (c.tests == 0) return;
  out += fmt::format(
      "\n| why | tests |\n| --- | --- |\n"
      "| device work by the shim's record: a request naming CUDA placed tensors or modules while "
      "it set up or ran | {} |\n"
      "| fails in code of its own that runs only where CUDA is there (an `if "
      "torch.cuda.is_available():` block) | {} |\n"
      "| skipped without the shim, ran with it | {} |\n"
      "| new under the shim | {} |\n"
      "| only asked, not counted above: its one contact was a masqueraded query, seeding or "
      "stream | {} |\n",
      c.recorded, c.in_branch, c.unskipped, c.new_tests, c.asked);
}

// What a porter reads first (glance_lines): did the shim break code that ran both ways, and how
// did the CUDA branches do that ran only with it.
void glance_section(const Report& r, std::string& out) {
  const std::vector<GlanceLine> lines = glance_lines(r);
  if (lines.empty()) return;
  out += "## At a glance\n\n";
  for (const GlanceLine& l : lines) {
    out += "- " + (l.head.empty() ? "" : "**" + md_cell(l.head, 200) + "**") +
           md_cell(l.rest, 600) + "\n";
  }
  out += "\n";
}

// Files that reported no test, and what stopped each (its exception and innermost frames).
void file_errors_section(const Report& r, std::string& out) {
  std::size_t n = 0;
  for (const ReportFile& f : r.files) n += f.error ? 1 : 0;
  if (n == 0) return;
  out += fmt::format("\n## File errors\n\n{} file{} reported no test: what stopped {}.\n\n", n,
                     n == 1 ? "" : "s", n == 1 ? "it" : "each");
  const bool lost = r.differential.has_value();
  out += lost ? "| file | status | error | where | tests lost | log |\n"
                "| --- | --- | --- | --- | --- | --- |\n"
              : "| file | status | error | where | log |\n| --- | --- | --- | --- | --- |\n";
  for (const ReportFile& f : r.files) {
    if (!f.error) continue;
    std::string where;
    for (const TracebackFrame& frame : f.error->frames) {
      where += (where.empty() ? "" : " ← ") + frame_text(frame);
    }
    out += fmt::format("| {} | {} | {} | {} |{} {} |\n", md_cell(f.file.path), f.status,
                       md_cell(file_error_text(*f.error), 300), md_cell(where, 400),
                       lost ? fmt::format(" {} |", f.lost) : std::string(),
                       f.log_link.empty() ? "" : md_link("log", f.log_link));
  }
}

// Files and tests by status, and the pass rate.
void summary_section(const Report& r, std::string& out) {
  out += "\n## Summary\n\n";
  out +=
      fmt::format("**{}** files: {}  \n", r.summary.files_total, counts_or_none(r.summary.files));
  out +=
      fmt::format("**{}** tests: {}  \n", r.summary.tests_total, counts_or_none(r.summary.tests));
  out += fmt::format("Pass rate: **{:.1f}%** (passed / all but skipped and xfailed)\n",
                     100.0 * r.summary.pass_rate);
}

// Failures grouped by signature, each with an example traceback and its tests.
void clusters_section(const Report& r, std::string& out) {
  out += "\n## Failure clusters\n\n";
  if (r.clusters.empty()) out += "No failures.\n";
  int n = 0;
  for (const auto& cl : r.clusters) {
    // GoogleTest failures have no exception type: their message names them.
    const std::string& title = !cl.exception.empty() ? cl.exception : cl.message;
    out += fmt::format("### {}. {} — {} test{}\n\n", ++n,
                       title.empty() ? "(no message)" : md_cell(title, 120), cl.tests.size(),
                       cl.tests.size() == 1 ? "" : "s");
    out +=
        fmt::format("Message: {}  \nSignature: `{}`\n\n", md_cell(cl.message, 500), cl.signature);
    if (!cl.example_traceback.empty()) {
      out += "<details><summary>Example traceback</summary>\n\n";
      out += md_code_block(cl.example_traceback);
      out += "\n</details>\n\n";
    }
    out += "| test | file | source |\n| --- | --- | --- |\n";
    for (const auto& t : cl.tests) {
      out += fmt::format(
          "| {} | {} | {} |\n", md_cell(test_label(r.run, t.file, t.classname, t.name)),
          md_cell(t.file),
          t.links.local.empty()
              ? ""
              : md_link("source", t.links.local) +
                    (t.links.upstream.empty() ? "" : " " + md_link("upstream", t.links.upstream)));
    }
    out += "\n";
  }
}

// Every failing test (and every test a kill is blamed on), one row each, then the commands that
// run each again the way this run ran it.
void failing_tests_section(const Report& r, std::string& out) {
  out += "## Failing tests\n\n";
  bool any = false;
  std::string commands;
  std::size_t n = 0, more = 0;  // commands listed, and beyond kListedRowsMax
  for (const auto& f : r.files) {
    for (const auto& c : f.cases) {
      if (!is_failure(c.test.status) && c.test.culprit.empty()) continue;
      if (!any) out += "| status | test | message | source |\n| --- | --- | --- | --- |\n";
      any = true;
      std::string status(to_string(c.test.status));
      if (!c.test.culprit.empty()) status += " (" + c.test.culprit + ")";
      if (c.cuda_path) status += " · CUDA path";
      std::string message = failure_text(c.test);
      out += fmt::format("| {} | {} | {} | {} |\n", status,
                         md_cell(test_label(r.run, f.file.path, c.test.classname, c.test.name)),
                         md_cell(message, 200), source_cell(c.links, c.test.source));
      const std::string command =
          rerun_command(r.run, test_ids(r.run, f.file.path, c.test.classname, c.test.name));
      if (command.empty()) continue;
      if (n++ < kListedRowsMax) {
        commands += command + "\n";
      } else {
        ++more;
      }
    }
  }
  if (!any) {
    out += "None.\n";
    return;
  }
  if (n == 0) return;
  out += fmt::format("\n<details><summary>Re-run a failing test ({})</summary>\n\n", n);
  out += "```sh\n" + commands + "```\n";
  if (more > 0) out += fmt::format("\n… and {} more (`runner show` prints each).\n", more);
  out += "\n</details>\n";
}

// The first test of a gap entry, as its framework names it; empty when it has none.
std::string example_test(const Report& r, const GapEntry& g) {
  if (g.test_list.empty()) return "";
  const GapTest& t = g.test_list.front();
  return test_label(r.run, t.file, t.classname, t.name);
}

// What fails the same way without the shim (gap log entries of kind environment): the suite's
// environment, not the shim's.
void environment_entries_section(const Report& r, std::string& out) {
  if (r.environment_entries.empty()) return;
  out +=
      "\n## Environment\n\nWhat fails the same way without the shim: the suite's environment, "
      "not a shim gap (`runner gaps --kind environment`).\n\n"
      "| error | files | action | example |\n| --- | --- | --- | --- |\n";
  for (const GapEntry& g : r.environment_entries) {
    const std::string example = example_test(r, g);
    out += fmt::format("| {} | {} | {} | {} |\n", md_cell(g.api, 160), g.files,
                       md_cell(g.action, 300), md_cell(example, 200));
  }
}

// The torch APIs the failures under the shim are attributed to, the most tests first.
void gaps_section(const Report& r, std::string& out) {
  if (r.gaps.empty()) return;
  constexpr std::size_t kTop = 10;
  out += fmt::format(
      "\n## Gaps\n\nTorch APIs this run's failures under the shim are attributed to, and what to "
      "do about each (`runner gaps`, docs/gaps.md){}.\n\n",
      r.gaps.size() > kTop ? fmt::format("; the {} with most tests of {}", kTop, r.gaps.size())
                           : "");
  out +=
      "| API | kind | status | severity | tests | action | equivalent | trial | example |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (std::size_t i = 0; i < r.gaps.size() && i < kTop; ++i) {
    const GapEntry& g = r.gaps[i];
    const std::string example = example_test(r, g);
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", md_cell(g.api, 120),
                       g.kind, g.status, g.severity, g.tests, md_cell(g.action, 300),
                       md_cell(g.equivalent, 100), md_cell(gap_trial_text(g.trial), 120),
                       md_cell(example, 200));
  }
}

// What the shim rewrote (always shown for a shim run, also when nothing was).
void redirections_section(const Report& r, std::string& out) {
  if (r.run.mode != "shim" && r.redirections.empty()) return;
  out += "\n## Redirections\n\n";
  if (r.redirections.empty()) {
    out += "None recorded: no test asked the shim for a device it rewrote.\n";
  } else {
    out +=
        "| API | requested → used | calls | files | call sites | first call site |\n"
        "| --- | --- | --- | --- | --- | --- |\n";
    for (const auto& d : r.redirections) {
      out += fmt::format("| {} | {} → {} | {} | {} | {} | {} |\n", md_cell(d.api, 120),
                         md_cell(d.requested, 40), md_cell(d.used, 40), d.count, d.files, d.sites,
                         source_cell(d.links, d.first_site));
    }
  }
}

// Failing files in a table, passed ones folded away.
void files_section(const Report& r, std::string& out) {
  out += "\n## Files\n\n";
  auto file_row = [](const ReportFile& f) {
    return fmt::format("| {} | {} | {} | {:.1f} s | {} |\n", f.status, md_cell(f.file.path),
                       md_cell(counts_or_none(f.counts)) +
                           (f.file.note.empty() ? "" : " — " + md_cell(f.file.note, 200)),
                       f.file.duration_s, f.log_link.empty() ? "" : md_link("log", f.log_link));
  };
  const char* header =
      "| status | file | tests | duration | log |\n| --- | --- | --- | --- | --- |\n";
  std::string failing, passing;
  int passed = 0;
  for (const auto& f : r.files) {
    if (f.status == "passed") {
      passing += file_row(f);
      ++passed;
    } else {
      failing += file_row(f);
    }
  }
  if (!failing.empty()) out += header + failing + "\n";
  if (passed > 0) {
    out += fmt::format("<details><summary>{} passed file{}</summary>\n\n{}{}\n</details>\n", passed,
                       passed == 1 ? "" : "s", header, passing);
  }
}

std::string render_markdown(const Report& r) {
  std::string out;
  out += fmt::format("# devshim report: {} run {} ({})\n\n", md_cell(r.run.suite), r.run.id,
                     r.run.mode);
  glance_section(r, out);
  environment_section(r, out);
  previous_section(r, out);
  cuda_path_section(r, out);
  differential_section(r, out);
  file_errors_section(r, out);
  summary_section(r, out);
  clusters_section(r, out);
  failing_tests_section(r, out);
  gaps_section(r, out);
  environment_entries_section(r, out);
  redirections_section(r, out);
  files_section(r, out);
  return out;
}

}  // namespace devshim
