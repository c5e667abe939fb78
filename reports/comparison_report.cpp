#include "reports/comparison_report.h"

#include <fmt/format.h>

#include <tuple>
#include <utility>

#include "base/error.h"
#include "base/printable.h"
#include "parsers/text.h"
#include "reports/fail_on.h"
#include "reports/json_report.h"
#include "reports/markdown.h"
#include "runner/results/native_id.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::size_t kTextMessageChars = 160;  ///< the text output cuts longer messages

}  // namespace

// What makes two runs differ besides their tests: from the run and its probed environment.
json comparison_run_json(const RunRecord& r, const std::string& md, const std::string& html) {
  const json env = environment_json(r);
  const json shim = env.contains("shim") && env["shim"].is_object() ? env["shim"] : json::object();
  auto text = [](const json& obj, const char* key) {
    return obj.contains(key) && obj[key].is_string() ? obj[key] : json(nullptr);
  };
  json policy = text(shim, "policy");
  if (policy.is_null() && !comparable_policy(r).empty()) policy = comparable_policy(r);
  return {{"id", r.id},
          {"suite", r.suite},
          {"mode", r.mode},
          {"status", r.status},
          {"started_at", r.started_at},
          {"host", r.host},
          {"project_commit", json_text(r.project_commit)},
          {"policy", policy},
          {"shim_version", text(shim, "version")},
          {"torch", text(env, "torch")},
          {"python", text(env, "python")},
          {"reports", {{"md", json_text(md)}, {"html", json_text(html)}}}};
}

namespace {

std::string text_or_dash(const json& j) { return j.is_string() ? j.get<std::string>() : "-"; }

// As run B's framework names it (A's, for a test B lost: the same suite's).
std::string test_label(const RunComparison& c, const ComparedTest& t) {
  return devshim::test_label(c.b, t.file, t.classname, t.name);
}

// "run 12 · shim · policy default · shim 0.4.0 · torch 2.13.0 · 2026-11-22T01:00:00Z · host"
std::string run_line(const RunRecord& run, const json& r) {
  return fmt::format("run {}  {}  {}  policy {}  shim {}  torch {}  {}  {}{}", run.id,
                     printable(run.suite), run.mode, text_or_dash(r["policy"]),
                     text_or_dash(r["shim_version"]), text_or_dash(r["torch"]), run.started_at,
                     printable(run.host),
                     run.project_commit.empty() ? "" : "  @ " + run.project_commit.substr(0, 12));
}

}  // namespace

ComparisonReport build_comparison_report(Store& store, const RunRecord& a, const RunRecord& b,
                                         const fs::path& dir) {
  ComparisonReport out;
  out.comparison = compare_runs(store, a, b);
  const LinkBase base_a = run_link_base(a, dir);
  const LinkBase base_b = run_link_base(b, dir);
  for (const auto& [cls, tests] : out.comparison.tests) {
    std::vector<SourceLinks>& links = out.links[cls];
    links.reserve(tests.size());
    for (const ComparedTest& t : tests) {
      links.push_back(source_links(t.source, cls == "lost" ? base_a : base_b));
    }
  }
  std::tie(out.a_md, out.a_html) = other_report_links(store, a.id, dir);
  std::tie(out.b_md, out.b_html) = other_report_links(store, b.id, dir);
  return out;
}

std::string comparison_renumbered_text(const RunComparison& c) {
  const int n = comparison_count(c, "renumbered");
  if (n == 0) return "";
  std::string out = fmt::format(
      "{} test{} of B {} parameterized case{} numbered otherwise than in A, in groups with more or "
      "fewer cases: not compared one by one.",
      n, n == 1 ? "" : "s", n == 1 ? "is a" : "are", n == 1 ? "" : "s");
  if (c.renumbered_regressions == 0) {
    return out + " Their counts prove none of them a regression.";
  }
  return out + fmt::format(
                   " At least {} of them {} regression{}: in their groups, more cases of A passed "
                   "than cases of B do not fail, so as many of those fail in B or are gone. "
                   "{} counted with the regressions.",
                   c.renumbered_regressions, c.renumbered_regressions == 1 ? "is a" : "are",
                   c.renumbered_regressions == 1 ? "" : "s",
                   c.renumbered_regressions == 1 ? "It is" : "They are");
}

json comparison_json(const ComparisonReport& report) {
  const RunComparison& c = report.comparison;
  json tests = json::object();
  for (const auto& [cls, list] : c.tests) {
    const std::vector<SourceLinks>& links = report.links.at(cls);
    json items = json::array();
    for (std::size_t i = 0; i < list.size(); ++i) {
      const ComparedTest& t = list[i];
      items.push_back(
          {{"file", t.file},
           {"id", devshim::test_label(c.b, t.file, t.classname, t.name)},
           {"classname", t.classname},
           {"name", t.name},
           {"a", t.status_a},
           {"b", t.status_b},
           {"message", json_text(t.message)},
           {"source", t.source.line > 0 ? json{{"path", t.source.path}, {"line", t.source.line}}
                                        : json(nullptr)},
           {"links", links_json(links[i])}});
    }
    tests[cls] = std::move(items);
  }
  return {{"a", comparison_run_json(c.a, report.a_md, report.a_html)},
          {"b", comparison_run_json(c.b, report.b_md, report.b_html)},
          {"counts", c.counts},
          {"renumbered_regressions", c.renumbered_regressions},
          {"tests", tests}};
}

std::string render_comparison_json(const ComparisonReport& report) {
  return comparison_json(report).dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_comparison_markdown(const ComparisonReport& report) {
  const RunComparison& c = report.comparison;
  std::string out = fmt::format("# Run {} compared with run {}\n\n", c.b.id, c.a.id);
  out += "| | A | B |\n| --- | --- | --- |\n";
  const json a = comparison_run_json(c.a, report.a_md, report.a_html);
  const json b = comparison_run_json(c.b, report.b_md, report.b_html);
  auto row = [&](const char* label, const std::string& va, const std::string& vb) {
    out += fmt::format("| {} | {} | {} |\n", label, va, vb);
  };
  auto field = [&](const json& r, const char* key) { return md_cell(text_or_dash(r[key]), 100); };
  row("Run", std::to_string(c.a.id), std::to_string(c.b.id));
  row("Suite", md_cell(c.a.suite), md_cell(c.b.suite));
  row("Mode", c.a.mode, c.b.mode);
  row("Policy", field(a, "policy"), field(b, "policy"));
  row("Shim", field(a, "shim_version"), field(b, "shim_version"));
  row("torch", field(a, "torch"), field(b, "torch"));
  row("Python", field(a, "python"), field(b, "python"));
  row("Started", c.a.started_at, c.b.started_at);
  row("Host", md_cell(c.a.host), md_cell(c.b.host));
  row("Commit", md_cell(c.a.project_commit.substr(0, 12)),
      md_cell(c.b.project_commit.substr(0, 12)));
  auto reports = [](const std::string& md, const std::string& html) {
    std::string s = md.empty() ? "" : md_link("report.md", md);
    if (!html.empty()) s += (s.empty() ? "" : " · ") + md_link("report.html", html);
    return s.empty() ? std::string("-") : s;
  };
  row("Reports", reports(report.a_md, report.a_html), reports(report.b_md, report.b_html));

  out += "\n| class | tests | meaning |\n| --- | --- | --- |\n";
  for (const auto& [cls, meaning] : comparison_classes()) {
    out += fmt::format("| {} | {} | {} |\n", cls, c.counts.at(cls), meaning);
  }
  if (const std::string renumbered = comparison_renumbered_text(c); !renumbered.empty()) {
    out += "\n" + md_cell(renumbered, renumbered.size()) + "\n";
  }
  for (const auto& [cls, meaning] : comparison_classes()) {
    if (cls == "same") continue;
    const auto it = c.tests.find(cls);
    const std::size_t n = it == c.tests.end() ? 0 : it->second.size();
    out += fmt::format("\n## {} ({})\n\n", cls, n);
    if (n == 0) {
      out += "None.\n";
      continue;
    }
    const std::vector<SourceLinks>& links = report.links.at(cls);
    out += "| test | A → B | message | source |\n| --- | --- | --- | --- |\n";
    for (std::size_t i = 0; i < n; ++i) {
      const ComparedTest& t = it->second[i];
      out += fmt::format("| {} | {} → {} | {} | {} |\n", md_cell(test_label(report.comparison, t)),
                         t.status_a, t.status_b, md_cell(t.message, 200), md_source_link(links[i]));
    }
  }
  return out;
}

std::string render_comparison_text(const ComparisonReport& report) {
  const RunComparison& c = report.comparison;
  std::string out;
  out += "A: " + run_line(c.a, comparison_run_json(c.a, "", "")) + "\n";
  out += "B: " + run_line(c.b, comparison_run_json(c.b, "", "")) + "\n";
  out += fmt::format("\n{:<14} {:>6}  meaning\n", "class", "tests");
  for (const auto& [cls, meaning] : comparison_classes()) {
    out += fmt::format("{:<14} {:>6}  {}\n", cls, c.counts.at(cls), meaning);
  }
  out += fmt::format("{:<14} {:>6}  regressed + lost{}\n", "regressions", comparison_regressions(c),
                     c.renumbered_regressions > 0
                         ? fmt::format(" + at least {} renumbered", c.renumbered_regressions)
                         : "");
  if (const std::string renumbered = comparison_renumbered_text(c); !renumbered.empty()) {
    out += "\n" + renumbered + "\n";
  }
  for (const auto& [cls, meaning] : comparison_classes()) {
    const auto it = c.tests.find(cls);
    if (it == c.tests.end()) continue;
    out += fmt::format("\n{} ({}):\n", cls, it->second.size());
    for (const auto& t : it->second) {
      std::string message = t.message;
      if (message.size() > kTextMessageChars) {
        message = std::string(cut_utf8(message, kTextMessageChars - 3)) + "...";
      }
      out += fmt::format("  {}  {} -> {}{}\n", printable(test_label(c, t)), t.status_a, t.status_b,
                         message.empty() ? "" : "  " + printable(message));
    }
  }
  return out;
}

namespace {

// ", at least 2 renumbered" where renumbered tests prove regressions.
std::string renumbered_part(const RunComparison& c) {
  return c.renumbered_regressions > 0
             ? fmt::format(", at least {} renumbered", c.renumbered_regressions)
             : "";
}

}  // namespace

ComparisonVerdict comparison_verdict(FailOn policy, const RunComparison& c) {
  const std::string runs = fmt::format("from run {} to run {}", c.a.id, c.b.id);
  const int regressed = comparison_count(c, "regressed");
  const int lost = comparison_count(c, "lost");
  ComparisonVerdict v;
  switch (policy) {
    case FailOn::kRegressions:
      v.findings = comparison_regressions(c);
      v.reason = fmt::format("--fail-on regressions: {} regression{} ({} regressed, {} lost{}) {}",
                             v.findings, v.findings == 1 ? "" : "s", regressed, lost,
                             renumbered_part(c), runs);
      break;
    case FailOn::kNewFailures: {
      int failing_new = 0;  // tests B runs that A did not, failing in B
      if (auto it = c.tests.find("newly_run"); it != c.tests.end()) {
        for (const ComparedTest& t : it->second) {
          if (t.status_b == "failed" || t.status_b == "error") ++failing_new;
        }
      }
      v.findings = comparison_regressions(c) + failing_new;
      v.reason = fmt::format(
          "--fail-on new-failures: {} test{} failing in B that did not in A ({} regressed, {} "
          "lost{}, {} new and failing) {}",
          v.findings, v.findings == 1 ? "" : "s", regressed, lost, renumbered_part(c), failing_new,
          runs);
      break;
    }
    case FailOn::kCudaBranchFailures:
      v.findings = comparison_count(c, "cuda_branch_failed");
      v.reason = fmt::format("--fail-on cuda-branch-failures: {} CUDA-branch failure{} {}",
                             v.findings, v.findings == 1 ? "" : "s", runs);
      break;
    case FailOn::kAny:
      v.findings = c.b.status == "passed" ? 0 : 1;
      v.reason = fmt::format("--fail-on any: run {} {}", c.b.id, c.b.status);
      break;
  }
  v.exit_code = v.findings > 0 ? kExitFailures : kExitOk;
  v.reason += fmt::format(", so exit {}", v.exit_code);
  return v;
}

ComparisonVerdict comparison_verdict(const FailOnList& policies, const RunComparison& c) {
  ComparisonVerdict all;
  for (FailOn policy : policies) {
    const ComparisonVerdict v = comparison_verdict(policy, c);
    all.findings += v.findings;
    if (v.exit_code != kExitOk) all.exit_code = v.exit_code;
    all.reason += (all.reason.empty() ? "" : "; ") + v.reason;
  }
  return all;
}

}  // namespace devshim
