// `runner compare A B`: two recorded runs compared test by test (runner/results/comparison.h),
// rendered as text, JSON, compare.md, compare.json and compare.html with the reports' links to
// source lines and to both runs' reports.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/fail_on.h"
#include "reports/report.h"
#include "runner/results/comparison.h"
#include "runner/results/store.h"

namespace devshim {

/// A comparison with what its renderings link to, relative to the folder they are written to.
struct ComparisonReport {
  RunComparison comparison;
  /// Per class, parallel to comparison.tests: each test's source links (B's source; A's for a
  /// test that is lost).
  std::map<std::string, std::vector<SourceLinks>> links;
  /// Each run's report.md and report.html (other_report_links); empty when not there.
  std::string a_md, a_html, b_md, b_html;
};

/// Compares b with a (compare_runs) and computes links relative to dir.
ComparisonReport build_comparison_report(Store& store, const RunRecord& a, const RunRecord& b,
                                         const std::filesystem::path& dir);

/// What the renumbered tests prove: empty when there are none; else how many, that they are not
/// compared, and how many of them must be regressions (RunComparison::renumbered_regressions).
std::string comparison_renumbered_text(const RunComparison& c);

/// {"a": run, "b": run, "counts": {class: n}, "renumbered_regressions": n, "tests": {class:
/// [{"file", "id", "classname", "name", "a", "b", "message", "source", "links"}]}}; each run:
/// {"id", "suite", "mode", "status", "started_at", "host", "project_commit", "policy",
/// "shim_version", "torch", "python", "reports"}. Format: docs/report-format.md, "compare.json".
nlohmann::json comparison_json(const ComparisonReport& report);

/// compare.json: comparison_json indented by one space, with a final newline.
std::string render_comparison_json(const ComparisonReport& report);

/// One run as comparison_json shows it under "a" and "b" (md, html: its report links).
nlohmann::json comparison_run_json(const RunRecord& run, const std::string& md = "",
                                   const std::string& html = "");

/// compare.md: both runs, the classes with their counts and meanings, then every test of each
/// class but "same", linked to its source line.
std::string render_comparison_markdown(const ComparisonReport& report);

/// compare.html: the same as compare.md on one self-contained page (html::page_head), each
/// class's tests in a <details> (id "class-<name>"), one <li class="test"> per test.
std::string render_comparison_html(const ComparisonReport& report);

/// The text `runner compare` prints without --json or -o.
std::string render_comparison_text(const ComparisonReport& report);

/// What --fail-on makes of a comparison: regressions (the default) counts regressed and lost
/// tests and the regressions renumbered tests prove (comparison_regressions); new-failures adds the
/// tests B runs and A did not that fail in B; any: run B did not pass. exit_code is 1 when there is
/// a finding, else 0; reason says why, in one line
/// ("--fail-on regressions: 1 regression (1 regressed, 0 lost) from run 1 to run 2, so exit 1";
/// "..., at least 2 renumbered)" where renumbered tests prove some).
struct ComparisonVerdict {
  int findings = 0;
  int exit_code = 0;
  std::string reason;
};
ComparisonVerdict comparison_verdict(FailOn policy, const RunComparison& comparison);
/// Every policy of a list: findings summed, exit 1 when any policy has one, the reasons joined
/// by "; ".
ComparisonVerdict comparison_verdict(const FailOnList& policies, const RunComparison& comparison);

}  // namespace devshim
