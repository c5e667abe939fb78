#include "reports/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <tuple>
#include <utility>

#include "parsers/signature.h"
#include "parsers/text.h"
#include "runner/base/error.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

// Failing files first, in this order, then the rest.
int file_rank(const std::string& status) {
  static const char* order[] = {"crashed",     "timeout", "error",    "failed",
                                "interrupted", "not_run", "no_tests", "passed"};
  for (int i = 0; i < 8; ++i) {
    if (status == order[i]) return i;
  }
  return 8;
}

std::string relative_link(const fs::path& target, const fs::path& from_dir) {
  fs::path rel = target.lexically_normal().lexically_relative(from_dir.lexically_normal());
  return rel.empty() ? target.generic_string() : rel.generic_string();
}

}  // namespace

std::string upstream_url(const std::string& url_template, const std::string& commit,
                         const std::string& path, int line) {
  if (url_template.empty() || commit.empty() || path.empty()) return "";
  // Only web links: a stored template of another scheme (javascript:, data:) never becomes a link.
  if (!is_web_url(url_template)) return "";
  std::string templ = url_template;
  if (line <= 0) {  // no line to point at: drop the fragment that would name one
    if (auto at = templ.find("#L{line}"); at != std::string::npos) templ.erase(at, 8);
  }
  std::string out;
  for (std::size_t i = 0; i < templ.size(); ++i) {
    if (templ.compare(i, 8, "{commit}") == 0) {
      out += commit;
      i += 7;
    } else if (templ.compare(i, 6, "{path}") == 0) {
      out += path;
      i += 5;
    } else if (templ.compare(i, 6, "{line}") == 0) {
      out += std::to_string(line);
      i += 5;
    } else {
      out += templ[i];
    }
  }
  return out;
}

SourceLinks source_links(const SourceLocation& loc, const LinkBase& base) {
  SourceLinks links;
  if (loc.path.empty()) return links;
  const fs::path given(loc.path);
  const fs::path source = given.is_absolute() ? given : (base.project / given).lexically_normal();
  const std::string anchor = loc.line > 0 ? "#L" + std::to_string(loc.line) : "";
  std::error_code ec;
  if (!given.is_absolute() || fs::is_regular_file(source, ec)) {
    links.local = relative_link(source, base.report_dir) + anchor;
  }
  // {path}: the source's path inside the git checkout (the project's path when that is unknown).
  fs::path in_repo = base.git_toplevel.empty() ? (given.is_absolute() ? fs::path() : given)
                                               : source.lexically_relative(base.git_toplevel);
  if (!in_repo.empty() && *in_repo.begin() != "..") {
    links.upstream = upstream_url(base.source_url, base.commit, in_repo.generic_string(), loc.line);
  }
  return links;
}

std::pair<std::string, std::string> other_report_links(Store& store, std::int64_t run_id,
                                                       const fs::path& report_dir) {
  const std::optional<RunRecord> other = store.run(run_id);
  if (!other || other->out_dir.empty()) return {};
  auto link_to = [&](const char* file) -> std::string {
    const fs::path path = fs::path(other->out_dir) / file;
    std::error_code ec;
    return fs::is_regular_file(path, ec) ? relative_link(path, fs::absolute(report_dir)) : "";
  };
  return {link_to("report.md"), link_to("report.html")};
}

std::string later_relation_text(const std::string& relation) {
  return relation == "baseline" ? "shim run with this baseline" : "compared with this run";
}

namespace {

std::vector<ReportLaterRun> later_runs(Store& store, std::int64_t run_id,
                                       const fs::path& report_dir) {
  std::vector<ReportLaterRun> out;
  for (const RunRecord& later : store.runs_naming(run_id)) {
    ReportLaterRun l;
    l.run = later.id;
    l.started_at = later.started_at;
    l.relation = later.baseline_run == run_id ? "baseline" : "previous";
    std::tie(l.md, l.html) = other_report_links(store, later.id, report_dir);
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

nlohmann::json run_summary(const Report& r) {
  using nlohmann::json;
  auto count = [](const std::map<std::string, int>& counts, const char* key) {
    auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  };
  int failing_files = 0;
  for (const auto& [status, n] : r.summary.files) {
    if (status != "passed" && status != "no_tests" && status != "not_run") failing_files += n;
  }
  json s{{"tests", r.summary.tests_total},
         {"by_status", r.summary.tests},
         {"pass_rate", r.summary.pass_rate},
         {"duration_s", r.duration_s},
         {"files", r.summary.files_total},
         {"files_failing", failing_files},
         {"flaky", r.flaky.size()},
         {"gaps", r.gaps.size()},
         {"previous_run", nullptr},
         {"new_failures", nullptr},
         {"fixed", nullptr},
         {"baseline_run", nullptr},
         {"regressions", nullptr},
         {"unlocked", nullptr},
         {"newly_skipped", nullptr}};
  if (r.previous) {
    s["previous_run"] = r.previous->previous_run;
    s["new_failures"] = r.previous->new_failures.size();
    s["fixed"] = r.previous->fixed.size();
  }
  if (r.differential) {
    const ReportDifferential& d = *r.differential;
    s["baseline_run"] = d.baseline_run;
    s["regressions"] = count(d.counts, "regression");
    s["unlocked"] = count(d.counts, "unlocked");
    s["newly_skipped"] = count(d.counts, "newly_skipped");
  }
  return s;
}

Report build_and_store_report(Store& store, std::int64_t run_id, const fs::path& report_dir) {
  Report report = build_report(store, run_id, report_dir);
  store.set_summary(run_id, run_summary(report).dump());
  return report;
}

std::string other_versions_text(const Report& r) {
  if (!r.other_versions) return "";
  const ReportOtherVersions& o = *r.other_versions;
  auto text = [](const RunVersions& v) {
    return fmt::format("torch {} and shim {}", v.torch.empty() ? "unknown" : v.torch,
                       v.shim.empty() ? "-" : v.shim);
  };
  return fmt::format(
      "No earlier run of this suite, targets, mode and policy has {}, so this run is compared "
      "with none. The newest such run, run {} ({}), has {}: `runner report {} --against {}` "
      "compares with it.",
      text(o.own), o.run, o.started_at, text(o.versions), r.run.id, o.run);
}

std::string differential_meaning(const ReportDifferential& d, const std::string& cls,
                                 const std::string& meaning) {
  if (cls != "newly_skipped" || d.masquerade_skips == 0) return meaning;
  return fmt::format(
      "{}; {} of them want no GPU and skip because the CUDA masquerade says one is "
      "there (expected)",
      meaning, d.masquerade_skips);
}

const std::vector<std::pair<std::string, std::string>>& change_classes() {
  static const std::vector<std::pair<std::string, std::string>> classes{
      {"new_failure", "fails now; passed, skipped or was absent in the previous run"},
      {"fixed", "failed in the previous run, does not fail now"},
      {"still_failing", "failed in the previous run and fails now"},
      {"flaky", "failed, then passed on a rerun (--rerun-failures)"},
      {"unchanged", "did not fail either time"}};
  return classes;
}

std::string change_class(std::optional<CaseStatus> previous, CaseStatus current, bool flaky) {
  if (flaky) return "flaky";
  const bool before = previous && is_failure(*previous);
  if (is_failure(current)) return before ? "still_failing" : "new_failure";
  return before ? "fixed" : "unchanged";
}

std::string start_mode_text(const nlohmann::json& environment) {
  if (!environment.is_object()) return "";
  const auto it = environment.find("start");
  if (it == environment.end() || !it->is_object()) return "";
  const std::string mode = it->value("mode", std::string("?"));
  if (mode == "warm") {
    std::string preloaded;
    if (auto p = it->find("preloaded"); p != it->end() && p->is_array()) {
      for (const auto& m : *p) {
        if (m.is_string()) preloaded += (preloaded.empty() ? "" : ", ") + m.get<std::string>();
      }
    }
    return fmt::format("warm ({} preloaded in {:.1f} s)", preloaded.empty() ? "nothing" : preloaded,
                       it->value("ready_s", 0.0));
  }
  const std::string why = it->value("why", std::string());
  return why.empty() ? mode : mode + " (" + why + ")";
}

std::string device_probe_text(const nlohmann::json& environment) {
  if (!environment.is_object()) return "";
  auto it = environment.find("device_probe");
  if (it == environment.end() || !it->is_object()) return "";
  const nlohmann::json& p = *it;
  if (auto e = p.find("probe_error"); e != p.end() && e->is_string()) {
    return "unavailable: " + e->get<std::string>();
  }
  std::string text = "LibTorch " + p.value("torch_version", std::string("?"));
  if (auto devices = p.find("devices"); devices != p.end() && devices->is_array()) {
    for (const auto& d : *devices) {
      if (!d.is_object()) continue;
      std::string ok;
      if (auto m = d.find("matmul"); m != d.end() && m->is_object()) {
        for (const auto& [dtype, works] : m->items()) {
          if (works.is_boolean() && works.get<bool>()) ok += (ok.empty() ? "" : ", ") + dtype;
        }
      }
      text += fmt::format(" · {}: {} recommended (matmul {})", d.value("device", std::string("?")),
                          d.value("recommended_dtype", std::string("?")), ok.empty() ? "none" : ok);
    }
  }
  if (auto pol = p.find("policy"); pol != p.end() && pol->is_object()) {
    text += " · cuda → " + pol->value("cuda_redirects_to", std::string("?"));
  }
  return text;
}

namespace {

// One test of a differential run: its class against its baseline status (nullopt: absent there),
// counted; a regression listed; a newly skipped test that wants no GPU counted apart.
void classify(ReportDifferential& d, const std::string& file, ReportCase& rc,
              std::optional<CaseStatus> before) {
  rc.diff_class = diff_class(before, rc.test.status);
  ++d.counts[rc.diff_class];
  if (rc.diff_class == "newly_skipped" && skip_wants_no_gpu(rc.test.message)) {
    ++d.masquerade_skips;
  }
  std::vector<ReportDifferential::Test>* list = rc.diff_class == "regression" ? &d.regressions
                                                : rc.diff_class == "unlocked" ? &d.unlocked
                                                : rc.diff_class == "newly_skipped"
                                                    ? &d.newly_skipped
                                                : rc.diff_class == "broken_both" ? &d.broken_both
                                                                                 : nullptr;
  if (list == nullptr) return;
  list->push_back(
      {file, rc.test.classname, rc.test.name, before ? std::string(to_string(*before)) : "absent",
       std::string(to_string(rc.test.status)),
       rc.test.exception.empty() ? rc.test.message : rc.test.exception + ": " + rc.test.message,
       rc.links});
}

// The run's redirections, one per (shim, API, requested, used), with links to the first call site.
std::vector<ReportRedirection> report_redirections(Store& store, std::int64_t run_id,
                                                   const LinkBase& link_base) {
  std::vector<ReportRedirection> out;
  for (const RunRedirection& rr : store.redirections(run_id)) {
    ReportRedirection red;
    red.shim = rr.first.shim;
    red.api = rr.first.api;
    red.requested = rr.first.requested;
    red.used = rr.first.used;
    red.count = rr.count;
    red.files = rr.files;
    red.sites = rr.sites;
    red.first_site = {rr.first.site_file, rr.first.site_line};
    red.first_function = rr.first.site_function;
    red.links = source_links(red.first_site, link_base);
    out.push_back(std::move(red));
  }
  return out;
}

}  // namespace

namespace {

nlohmann::json environment_of(const RunRecord& run) {
  nlohmann::json env = nlohmann::json::parse(run.environment.empty() ? "{}" : run.environment,
                                             nullptr, /*allow_exceptions=*/false);
  return env.is_object() ? env : nlohmann::json::object();
}

}  // namespace

LinkBase run_link_base(const RunRecord& run, const fs::path& report_dir) {
  LinkBase base{run.project_root, {}, fs::absolute(report_dir), run.source_url, run.project_commit};
  const nlohmann::json env = environment_of(run);
  if (auto top = env.find("git_toplevel"); top != env.end() && top->is_string()) {
    base.git_toplevel = top->get<std::string>();
  }
  return base;
}

Report build_report(Store& store, std::int64_t run_id, const fs::path& report_dir,
                    std::int64_t against) {
  auto run = store.run(run_id);
  if (!run) throw UsageError(fmt::format("no run {} in {}", run_id, store.path().string()));
  if (against > 0 && !store.run(against)) {
    throw UsageError(fmt::format("no run {} in {}", against, store.path().string()));
  }
  Report r;
  r.run = *run;
  r.environment = environment_of(*run);
  r.duration_s = seconds_between(run->started_at, run->finished_at);

  const fs::path dir = fs::absolute(report_dir);
  const LinkBase link_base = run_link_base(*run, dir);
  auto links_for = [&](const SourceLocation& loc) { return source_links(loc, link_base); };

  std::map<std::string, std::vector<StoredCase>> by_file;
  for (auto& c : store.cases(run_id)) by_file[c.file].push_back(std::move(c));

  // The baseline's outcome of every test, for differential runs.
  RunStatuses baseline;
  if (run->baseline_run > 0) {
    r.differential.emplace();
    r.differential->baseline_run = run->baseline_run;
    std::tie(r.differential->baseline_md, r.differential->baseline_html) =
        other_report_links(store, run->baseline_run, dir);
    baseline = RunStatuses(store, run->baseline_run);
  }

  std::map<std::string, std::size_t> cluster_index;
  for (auto& f : store.files(run_id)) {
    ReportFile rf;
    rf.status = f.status ? std::string(to_string(*f.status)) : "not_run";
    if (!f.log_path.empty()) rf.log_link = relative_link(fs::path(run->out_dir) / f.log_path, dir);
    ++r.summary.files[rf.status];
    ++r.summary.files_total;
    for (auto& sc : by_file[f.path]) {
      ReportCase rc;
      rc.links = links_for(sc.test.source);
      rc.signature = sc.signature;
      rc.flaky = sc.flaky;
      rc.test = std::move(sc.test);
      if (r.differential) {
        classify(*r.differential, f.path, rc, baseline.find(f.path, rc.test));
      }
      const std::string status(to_string(rc.test.status));
      ++rf.counts[status];
      ++r.summary.tests[status];
      ++r.summary.tests_total;
      if (!rc.signature.empty() && !rc.flaky) {  // a flaky test passed in the end
        auto [it, fresh] = cluster_index.emplace(rc.signature, r.clusters.size());
        if (fresh) {
          ReportCluster cl;
          cl.signature = rc.signature;
          cl.exception = rc.test.exception;
          cl.example_message = rc.test.message;
          cl.example_traceback = rc.test.traceback;
          r.clusters.push_back(std::move(cl));
        }
        r.clusters[it->second].tests.push_back({f.path, rc.test.classname, rc.test.name, rc.links});
      }
      rf.cases.push_back(std::move(rc));
    }
    rf.file = std::move(f);
    r.files.push_back(std::move(rf));
  }
  for (auto& cl : r.clusters) {
    cl.message = normalize_message(cl.example_message);
  }
  r.gaps = GapLog(store).for_run(run_id);
  std::stable_sort(r.gaps.begin(), r.gaps.end(),
                   [](const GapEntry& a, const GapEntry& b) { return a.tests > b.tests; });
  r.redirections = report_redirections(store, run_id, link_base);
  std::stable_sort(r.clusters.begin(), r.clusters.end(),
                   [](const ReportCluster& a, const ReportCluster& b) {
                     return a.tests.size() > b.tests.size();
                   });
  std::stable_sort(r.files.begin(), r.files.end(), [](const ReportFile& a, const ReportFile& b) {
    return file_rank(a.status) < file_rank(b.status);
  });
  add_run_to_run(store, r, against > 0 ? against : run->previous_run);
  if (!r.previous && against == 0 && run->status != "running") {
    RunRecord any_versions = *run;
    any_versions.environment.clear();
    auto other = store.comparable_run(any_versions, run->id);
    // A previous run that was pruned leaves none, with no difference of versions to tell.
    if (other && !(run_versions(*other) == run_versions(*run))) {
      r.other_versions = ReportOtherVersions{other->id, other->started_at, run_versions(*other),
                                             run_versions(*run)};
    }
  }
  if (r.previous) {
    r.previous->against = against > 0;
    std::tie(r.previous->previous_md, r.previous->previous_html) =
        other_report_links(store, r.previous->previous_run, dir);
  }
  r.later_runs = later_runs(store, run_id, dir);
  const int counted =
      r.summary.tests_total - r.summary.tests["skipped"] - r.summary.tests["xfailed"];
  r.summary.pass_rate = counted > 0 ? static_cast<double>(r.summary.tests["passed"]) / counted : 0;
  // Keep only non-zero entries (operator[] above may have added zeros).
  std::erase_if(r.summary.tests, [](const auto& kv) { return kv.second == 0; });
  return r;
}

}  // namespace devshim
