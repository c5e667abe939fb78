#include "reports/json_report.h"

#include "runner/results/native_id.h"

namespace devshim {

using nlohmann::json;

json json_text(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json links_json(const SourceLinks& l) {
  return {{"local", json_text(l.local)}, {"upstream", json_text(l.upstream)}};
}

namespace {

// A rerun test's attempts, or null when it was not rerun.
json attempts_json(const std::vector<CaseAttempt>& attempts) {
  if (attempts.empty()) return nullptr;
  json out = json::array();
  for (const auto& a : attempts) {
    out.push_back({{"attempt", a.attempt},
                   {"status", std::string(to_string(a.status))},
                   {"message", json_text(a.message)}});
  }
  return out;
}

// The run against its previous run: counts by class, new failures and fixes listed.
json previous_json(const Report& r) {
  if (!r.previous) return nullptr;
  auto changes = [&r](const std::vector<ReportPrevious::Change>& list) {
    json out = json::array();
    for (const auto& c : list) {
      out.push_back({{"file", c.file},
                     {"id", test_label(r.run, c.file, c.classname, c.name)},
                     {"classname", c.classname},
                     {"name", c.name},
                     {"previous_status", c.previous_status},
                     {"status", c.status},
                     {"message", json_text(c.message)},
                     {"links", links_json(c.links)}});
    }
    return out;
  };
  return {{"run", r.previous->previous_run},
          {"chosen", r.previous->against ? "against" : "previous"},
          {"started_at", r.previous->started_at},
          {"reports",
           {{"md", json_text(r.previous->previous_md)},
            {"html", json_text(r.previous->previous_html)}}},
          {"counts", r.previous->counts},
          {"new_failures", changes(r.previous->new_failures)},
          {"fixed", changes(r.previous->fixed)},
          {"lost", changes(r.previous->lost)},
          {"missing_before", changes(r.previous->missing_before)}};
}

// Every flaky test of the run with its attempts ([] when none).
json flaky_json(const Report& r) {
  json flaky = json::array();
  for (const auto& f : r.flaky) {
    flaky.push_back({{"file", f.file},
                     {"id", test_label(r.run, f.file, f.classname, f.name)},
                     {"classname", f.classname},
                     {"name", f.name},
                     {"attempts", attempts_json(f.attempts)},
                     {"links", links_json(f.links)}});
  }
  return flaky;
}

// The run record: what ran, where, when, and the environment.
json run_json(const Report& r) {
  json run = {
      {"id", r.run.id},
      {"suite", r.run.suite},
      {"suite_file", r.run.suite_file},
      {"framework", r.run.framework},
      {"mode", r.run.mode},
      {"status", r.run.status},
      {"targets", r.run.targets},
      {"command_line", r.run.command_line},
      {"project_root", r.run.project_root},
      {"tests_dir", r.run.tests_dir},
      {"project_commit", json_text(r.run.project_commit)},
      {"host", r.run.host},
      {"jobs", r.run.jobs},
      {"timeout_s", r.run.timeout_s},
      {"started_at", r.run.started_at},
      {"finished_at", json_text(r.run.finished_at)},
      {"duration_s", r.duration_s},
      {"environment", r.environment},
  };
  return run;
}

// One test of a file: its result, where it is, how it compares.
json case_json(const Report& r, const std::string& file, const ReportCase& c) {
  const TestCase& t = c.test;
  const TestIds ids = test_ids(r.run, file, t.classname, t.name);
  return {
      {"id", ids.native},
      {"rerun", is_failure(t.status) || !t.culprit.empty() ? json_text(rerun_command(r.run, ids))
                                                           : json(nullptr)},
      {"classname", t.classname},
      {"name", t.name},
      {"status", std::string(to_string(t.status))},
      {"duration_s", t.duration_s},
      {"exception", json_text(t.exception)},
      {"message", json_text(t.message)},
      {"signature", json_text(c.signature)},
      {"culprit", json_text(t.culprit)},
      {"source", t.source.path.empty()
                     ? json(nullptr)
                     : json{{"path", t.source.path},
                            {"line", t.source.line > 0 ? json(t.source.line) : json(nullptr)}}},
      {"links", links_json(c.links)},
      {"diff_class", json_text(c.diff_class)},
      {"cuda_path", c.cuda_path},
      {"cuda_asked", c.cuda_asked},
      {"change", json_text(c.change)},
      {"flaky", c.flaky},
      {"attempts", attempts_json(c.attempts)},
  };
}

// What stopped a file that reported no test; null for the others.
json file_error_json(const std::optional<FileError>& error) {
  if (!error) return nullptr;
  json frames = json::array();
  for (const TracebackFrame& f : error->frames) {
    frames.push_back({{"file", f.file},
                      {"line", f.line > 0 ? json(f.line) : json(nullptr)},
                      {"function", json_text(f.function)}});
  }
  return {{"exception", json_text(error->exception)},
          {"message", json_text(error->message)},
          {"frames", std::move(frames)}};
}

// Every file with its tests.
json files_json(const Report& r) {
  json files = json::array();
  for (const auto& f : r.files) {
    json cases = json::array();
    for (const auto& c : f.cases) {
      cases.push_back(case_json(r, f.file.path, c));
    }
    json fj = {{"path", f.file.path},
               {"status", f.status},
               {"duration_s", f.file.duration_s},
               {"log", json_text(f.log_link)},
               {"exit_code", f.file.exit_code ? json(*f.file.exit_code) : json(nullptr)},
               {"signal", f.file.signal ? json(*f.file.signal) : json(nullptr)},
               {"note", json_text(f.file.note)},
               {"counts", f.counts},
               {"error", file_error_json(f.error)},
               {"lost", r.differential ? json(f.lost) : json(nullptr)},
               {"cases", std::move(cases)}};
    files.push_back(std::move(fj));
  }
  return files;
}

// Failures grouped by signature, with their tests.
json clusters_json(const Report& r) {
  json clusters = json::array();
  for (const auto& cl : r.clusters) {
    json tests = json::array();
    for (const auto& t : cl.tests) {
      tests.push_back({{"file", t.file},
                       {"id", test_label(r.run, t.file, t.classname, t.name)},
                       {"classname", t.classname},
                       {"name", t.name},
                       {"links", links_json(t.links)}});
    }
    clusters.push_back({{"signature", cl.signature},
                        {"count", cl.tests.size()},
                        {"exception", cl.exception},
                        {"message", cl.message},
                        {"example_message", cl.example_message},
                        {"example_traceback", cl.example_traceback},
                        {"tests", std::move(tests)}});
  }
  return clusters;
}

// The tests of one differential class.
json diff_tests_json(const Report& r, const std::vector<ReportDifferential::Test>& tests) {
  json out = json::array();
  for (const auto& g : tests) {
    out.push_back({{"file", g.file},
                   {"id", test_label(r.run, g.file, g.classname, g.name)},
                   {"classname", g.classname},
                   {"name", g.name},
                   {"baseline_status", g.baseline_status},
                   {"status", g.status},
                   {"message", json_text(g.message)},
                   {"gap", g.gap.empty() ? json(nullptr) : json(g.gap)},
                   {"links", links_json(g.links)}});
  }
  return out;
}

// The CUDA-branch failures, each with its cause, and the causes with their counts, severity and
// action.
json cuda_branch_json(const Report& r, const ReportDifferential& d) {
  json tests = diff_tests_json(r, d.cuda_branch_failures);
  for (std::size_t i = 0; i < tests.size(); ++i) {
    tests[i]["cause"] = cuda_branch_cause_text(d.cuda_branch_failures[i].cause).id;
  }
  json causes = json::array();
  for (const auto& [cause, n] : cuda_branch_failures_by_cause(d)) {
    const CudaBranchCauseText& text = cuda_branch_cause_text(cause);
    causes.push_back({{"cause", text.id},
                      {"title", text.title},
                      {"tests", n},
                      {"severity", text.severity},
                      {"action", text.action}});
  }
  return {{"tests", std::move(tests)}, {"causes", std::move(causes)}};
}

// The baseline comparison of a differential run; null for other runs.
json differential_json(const Report& r) {
  if (!r.differential) return nullptr;
  const ReportDifferential& d = *r.differential;
  json branches = cuda_branch_json(r, d);
  return {{"baseline_run", d.baseline_run},
          {"baseline_reports",
           {{"md", json_text(d.baseline_md)}, {"html", json_text(d.baseline_html)}}},
          {"counts", d.counts},
          {"masquerade_skips", d.masquerade_skips},
          {"baseline_passed", d.baseline_passed},
          {"renumbered_failing", d.renumbered_failing},
          {"renumbered_regressions", d.renumbered_regressions},
          {"baseline_saw_cuda", d.baseline_saw_cuda},
          {"regressions", diff_tests_json(r, d.regressions)},
          {"cuda_branch_failures", std::move(branches["tests"])},
          {"cuda_branch_causes", std::move(branches["causes"])},
          {"lost", diff_tests_json(r, d.lost)},
          {"unlocked", diff_tests_json(r, d.unlocked)},
          {"newly_skipped", diff_tests_json(r, d.newly_skipped)},
          {"broken_both", diff_tests_json(r, d.broken_both)},
          {"new_under_shim", new_under_shim(d)},
          {"new_failed", diff_tests_json(r, d.new_failed)}};
}

// The tests of a shim run that took a CUDA path; null for other runs.
json cuda_path_json(const Report& r) {
  if (!r.cuda_path) return nullptr;
  const ReportCudaPath& c = *r.cuda_path;
  return {
      {"tests", c.tests},
      {"passed", c.passed},
      {"failed", c.failed},
      {"skipped", c.skipped},
      {"failed_without_shim", c.failed_without_shim ? json(*c.failed_without_shim) : json(nullptr)},
      {"by_reason",
       {{"recorded", c.recorded},
        {"in_branch", c.in_branch},
        {"unskipped", c.unskipped},
        {"new", c.new_tests}}},
      {"asked", c.asked},
      {"headline", cuda_path_text(c)}};
}

// What the shim rewrote, one entry per API and device pair.
json redirections_json(const Report& r) {
  json redirections = json::array();
  for (const auto& d : r.redirections) {
    redirections.push_back(
        {{"shim", d.shim},
         {"api", d.api},
         {"requested", d.requested},
         {"used", d.used},
         {"count", d.count},
         {"files", d.files},
         {"call_sites", d.sites},
         {"first_call_site",
          d.first_site.path.empty()
              ? json(nullptr)
              : json{{"path", d.first_site.path},
                     {"line", d.first_site.line > 0 ? json(d.first_site.line) : json(nullptr)},
                     {"function", json_text(d.first_function)}}},
         {"links", links_json(d.links)}});
  }
  return redirections;
}

// The gap-log entries the run's failures under the shim are attributed to (or those of kind
// environment: the same failure without the shim).
json gaps_json(const std::vector<GapEntry>& entries) {
  json gaps = json::array();
  for (const auto& g : entries) {
    json tests = json::array();
    for (const auto& t : g.test_list) {
      tests.push_back({{"file", t.file}, {"classname", t.classname}, {"name", t.name}});
    }
    gaps.push_back({{"suite", g.suite},
                    {"api", g.api},
                    {"kind", g.kind},
                    {"status", g.status},
                    {"severity", g.severity},
                    {"tests", g.tests},
                    {"test_list", std::move(tests)},
                    {"first_seen_run", g.first_seen_run > 0 ? json(g.first_seen_run) : json()},
                    {"action", json_text(g.action)},
                    {"equivalent", json_text(g.equivalent)},
                    {"setting", json_text(g.setting)},
                    {"trial", gap_trial_json(g.trial)},
                    {"why", json_text(g.why)},
                    {"note", json_text(g.note)}});
  }
  return gaps;
}

// The runs naming this one as their previous run or baseline ([] when none).
json later_runs_json(const Report& r) {
  json out = json::array();
  for (const auto& l : r.later_runs) {
    out.push_back({{"run", l.run},
                   {"started_at", l.started_at},
                   {"relation", l.relation},
                   {"reports", {{"md", json_text(l.md)}, {"html", json_text(l.html)}}}});
  }
  return out;
}

// Files and tests by status, and the pass rate.
json summary_json(const Report& r) {
  return {{"files", r.summary.files},
          {"tests", r.summary.tests},
          {"files_total", r.summary.files_total},
          {"tests_total", r.summary.tests_total},
          {"pass_rate", r.summary.pass_rate}};
}

}  // namespace

json render_json(const Report& r) {
  return {{"schema_version", kReportSchemaVersion},
          {"previous", previous_json(r)},
          {"previous_other_versions",
           r.other_versions ? json{{"run", r.other_versions->run},
                                   {"started_at", r.other_versions->started_at},
                                   {"torch", json_text(r.other_versions->versions.torch)},
                                   {"shim_version", json_text(r.other_versions->versions.shim)}}
                            : json(nullptr)},
          {"later_runs", later_runs_json(r)},
          {"flaky", flaky_json(r)},
          {"cuda_path", cuda_path_json(r)},
          {"differential", differential_json(r)},
          {"run", run_json(r)},
          {"summary", summary_json(r)},
          {"files", files_json(r)},
          {"clusters", clusters_json(r)},
          {"redirections", redirections_json(r)},
          {"gaps", gaps_json(r.gaps)},
          {"environment_entries", gaps_json(r.environment_entries)}};
}

std::string dump_report_json(const json& report) {
  return report.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace devshim
