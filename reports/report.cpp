#include "reports/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <functional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "base/error.h"
#include "parsers/signature.h"
#include "parsers/text.h"
#include "reports/case_outcomes.h"

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

}  // namespace

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

int class_count(const std::map<std::string, int>& counts, const char* cls) {
  auto it = counts.find(cls);
  return it == counts.end() ? 0 : it->second;
}

nlohmann::json run_summary(const Report& r) {
  using nlohmann::json;
  int failing_files = 0;
  for (const auto& [status, n] : r.summary.files) {
    if (status != "passed" && status != "no_tests" && status != "not_run") failing_files += n;
  }
  int file_errors = 0;
  for (const ReportFile& f : r.files) file_errors += f.error ? 1 : 0;
  json s{{"tests", r.summary.tests_total},
         {"by_status", r.summary.tests},
         {"pass_rate", r.summary.pass_rate},
         {"duration_s", r.duration_s},
         {"files", r.summary.files_total},
         {"files_failing", failing_files},
         {"file_errors", file_errors},
         {"flaky", r.flaky.size()},
         {"gaps", r.gaps.size()},
         {"environment_entries", r.environment_entries.size()},
         {"previous_run", nullptr},
         {"new_failures", nullptr},
         {"fixed", nullptr},
         {"baseline_run", nullptr},
         {"regressions", nullptr},
         {"baseline_passed", nullptr},
         {"lost", nullptr},
         {"unlocked", nullptr},
         {"newly_skipped", nullptr},
         {"new_under_shim", nullptr},
         {"cuda_branch_failures", nullptr},
         {"cuda_branch_passed", nullptr},
         {"cuda_path_tests", nullptr},
         {"cuda_path_passed", nullptr},
         {"cuda_path_asked", nullptr}};
  if (r.cuda_path) {
    s["cuda_path_tests"] = r.cuda_path->tests;
    s["cuda_path_passed"] = r.cuda_path->passed;
    s["cuda_path_asked"] = r.cuda_path->asked;
  }
  if (r.previous) {
    s["previous_run"] = r.previous->previous_run;
    s["new_failures"] = r.previous->new_failures.size() + r.previous->lost.size();
    s["fixed"] = r.previous->fixed.size();
  }
  if (r.differential) {
    const ReportDifferential& d = *r.differential;
    s["baseline_run"] = d.baseline_run;
    // Nothing compared (the baseline passed no test): no count of regressions or CUDA-branch
    // failures, not 0.
    const bool compared = d.baseline_passed > 0;
    s["regressions"] = compared ? json(regressions_total(d)) : json(nullptr);
    s["baseline_passed"] = d.baseline_passed;
    s["cuda_branch_failures"] =
        compared ? json(class_count(d.counts, "cuda_branch_failed")) : json(nullptr);
    s["cuda_branch_passed"] = class_count(d.counts, "cuda_branch_passed");
    s["lost"] = class_count(d.counts, "lost");
    s["unlocked"] = class_count(d.counts, "unlocked");
    s["newly_skipped"] = class_count(d.counts, "newly_skipped");
    s["new_under_shim"] = new_under_shim(d);
  }
  return s;
}

Report build_and_store_report(Store& store, std::int64_t run_id, const fs::path& report_dir) {
  Report report = build_report(store, run_id, report_dir);
  store.set_summary(run_id, run_summary(report).dump());
  return report;
}

std::vector<std::pair<std::string, int>> regressions_by_gap(const ReportDifferential& d) {
  std::map<std::string, int> counts;
  for (const auto* list : {&d.regressions, &d.lost}) {
    for (const auto& t : *list) ++counts[t.gap];
  }
  std::vector<std::pair<std::string, int>> out(counts.begin(), counts.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.first.empty() != b.first.empty()) return b.first.empty();
    return a.second > b.second;
  });
  return out;
}

int new_under_shim(const ReportDifferential& d) {
  int n = 0;
  for (const char* cls : {"new_passed", "new_failed", "new_skipped"})
    n += class_count(d.counts, cls);
  return n;
}

std::string cuda_path_text(const ReportCudaPath& c) {
  const std::string asked =
      c.asked == 0 ? ""
                   : fmt::format(" {} {}only asked (a query, seeding, a stream).", c.asked,
                                 c.tests == 0 ? (c.asked == 1 ? "test " : "tests ") : "more ");
  if (c.tests == 0) return "No test took a CUDA path under the shim." + asked;
  const std::string natively =
      c.failed_without_shim
          ? fmt::format(" ({} of them fail{} without the shim too)", *c.failed_without_shim,
                        *c.failed_without_shim == 1 ? "s" : "")
          : "";
  return fmt::format(
      "{} test{} took a CUDA path under the shim (device work): {} passed, {} failed{}, {} "
      "skipped.{}",
      c.tests, c.tests == 1 ? "" : "s", c.passed, c.failed, natively, c.skipped, asked);
}

int regressions_total(const ReportDifferential& d) {
  return static_cast<int>(d.regressions.size() + d.lost.size()) + d.renumbered_regressions;
}

std::vector<std::pair<CudaBranchCause, int>> cuda_branch_failures_by_cause(
    const ReportDifferential& d) {
  std::vector<int> counts(cuda_branch_causes().size());
  for (const auto& t : d.cuda_branch_failures) ++counts[static_cast<std::size_t>(t.cause)];
  std::vector<std::pair<CudaBranchCause, int>> out;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] > 0) out.emplace_back(cuda_branch_causes()[i].cause, counts[i]);
  }
  return out;
}

const std::vector<std::pair<std::string, std::string>>& change_classes() {
  static const std::vector<std::pair<std::string, std::string>> classes{
      {"new_failure", "fails now; passed, skipped or was absent in the previous run"},
      {"lost",
       "in the previous run, missing now: its file failed, crashed or timed out before it "
       "(counted with the new failures)"},
      {"fixed", "failed in the previous run, does not fail now"},
      {"still_failing", "failed in the previous run and fails now"},
      {"flaky", "failed, then passed on a rerun (--rerun-failures)"},
      {"missing_before",
       "missing from the previous run, whose file failed, crashed or timed out before it: not "
       "compared"},
      {"unchanged", "did not fail either time"}};
  return classes;
}

std::string change_class(std::optional<CaseStatus> previous, CaseStatus current, bool flaky,
                         bool previous_stopped) {
  if (flaky) return "flaky";
  if (!previous && previous_stopped) return "missing_before";
  const bool before = previous && is_failure(*previous);
  if (is_failure(current)) return before ? "still_failing" : "new_failure";
  return before ? "fixed" : "unchanged";
}

namespace {

// One test of a differential run, its class already counted: a listed class's test listed; a
// newly skipped test that wants no GPU counted apart.
void list_differential(ReportDifferential& d, const std::string& file, const ReportCase& rc,
                       std::optional<CaseStatus> before) {
  if (rc.diff_class == "newly_skipped" && skip_wants_no_gpu(rc.test.message)) {
    ++d.masquerade_skips;
  }
  std::vector<ReportDifferential::Test>* list =
      rc.diff_class == "regression"           ? &d.regressions
      : rc.diff_class == "cuda_branch_failed" ? &d.cuda_branch_failures
      : rc.diff_class == "unlocked"           ? &d.unlocked
      : rc.diff_class == "newly_skipped"      ? &d.newly_skipped
      : rc.diff_class == "broken_both"        ? &d.broken_both
      : rc.diff_class == "new_failed"         ? &d.new_failed
                                              : nullptr;
  if (list == nullptr) return;
  list->push_back(
      {file, rc.test.classname, rc.test.name, before ? std::string(to_string(*before)) : "absent",
       std::string(to_string(rc.test.status)),
       rc.test.exception.empty() ? rc.test.message : rc.test.exception + ": " + rc.test.message,
       rc.links});
  if (list == &d.cuda_branch_failures) list->back().failure = failure_kind(rc.test);
}

// Each result of the run against its baseline and its previous run, and whether build_report
// reads it in full. diff and change: indexes into differential_classes() and change_classes();
// -1 without a baseline or previous run.
struct RowOutcome {
  std::optional<CaseStatus> baseline;
  std::optional<CaseStatus> previous;
  std::int8_t diff = -1;
  std::int8_t change = -1;
  bool full = false;
  bool cuda_path = false;   // shim runs: ReportCudaPath's test
  bool cuda_asked = false;  // shim runs: only asked (ReportCudaPath::asked)
};

std::int8_t class_index(const std::vector<std::pair<std::string, std::string>>& classes,
                        const std::string& name) {
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].first == name) return static_cast<std::int8_t>(i);
  }
  throw std::logic_error("no class " + name);
}

// previous_stopped: by now's file index, whether the previous run's file stopped before its end
// (its tests missing there are missing_before, not new).
std::vector<RowOutcome> row_outcomes(const RunResultStatuses& now, const Report& r,
                                     const RunStatuses& baseline, const RunStatuses& previous,
                                     const std::vector<bool>& previous_stopped,
                                     const std::vector<CaseAttempt>& attempts, ReportCases cases) {
  std::set<std::string_view> rerun_files;
  for (const CaseAttempt& a : attempts) rerun_files.insert(a.file);
  std::vector<bool> file_rerun(now.files.size());
  for (std::size_t i = 0; i < now.files.size(); ++i) {
    file_rerun[i] = rerun_files.count(now.files[i]) > 0;
  }
  const std::int8_t unlocked = class_index(differential_classes(), "unlocked");
  const std::int8_t newly_skipped = class_index(differential_classes(), "newly_skipped");
  const std::int8_t fixed = class_index(change_classes(), "fixed");
  const std::int8_t missing_before = class_index(change_classes(), "missing_before");
  std::vector<RowOutcome> out(now.rows.size());
  for (std::size_t k = 0; k < now.rows.size(); ++k) {
    const RunResultStatuses::Row& row = now.rows[k];
    RowOutcome& o = out[k];
    bool is_new = false;
    if (r.differential) {
      o.baseline = baseline.find(row);
      is_new = baseline.is_new(row);
      o.diff = class_index(differential_classes(),
                           baseline.diff_class_of(row, !r.differential->baseline_saw_cuda));
    }
    const bool shim = r.run.mode == "shim";
    o.cuda_path = shim && took_cuda_path(row, o.baseline, is_new);
    o.cuda_asked = shim && only_asked_cuda(row, o.baseline, is_new);
    if (r.previous) {
      o.previous = previous.find(row);
      o.change = class_index(change_classes(), change_class(o.previous, row.status, row.flaky,
                                                            previous_stopped[row.file]));
    }
    o.full = cases == ReportCases::kAll || is_failure(row.status) || row.culprit || row.signature ||
             row.flaky || file_rerun[row.file] || o.diff == unlocked || o.diff == newly_skipped ||
             o.change == fixed || o.change == missing_before;
  }
  return out;
}

// One test of a shim run that took a CUDA path, counted by its outcome and its reason.
void count_cuda_path(ReportCudaPath& c, const RunResultStatuses::Row& row,
                     std::optional<CaseStatus> baseline) {
  ++c.tests;
  if (is_failure(row.status)) {
    ++c.failed;
    if (c.failed_without_shim && baseline && is_failure(*baseline)) ++*c.failed_without_shim;
  } else if (row.status == CaseStatus::kSkipped) {
    ++c.skipped;
  } else {
    ++c.passed;
  }
  if (row.cuda_contact == CudaContact::kDeviceWork) {
    ++c.recorded;
  } else if (ran_cuda_branch(row)) {
    ++c.in_branch;
  } else if (baseline == CaseStatus::kSkipped) {
    ++c.unskipped;
  } else {
    ++c.new_tests;
  }
}

// The tests of `other` that passed (passed, xfailed, xpassed) in the files of `files`.
int passed_in_files(const RunResultStatuses& other, const std::vector<FileRecord>& files) {
  std::set<std::string_view> paths;
  for (const FileRecord& f : files) paths.insert(f.path);
  int n = 0;
  for (const RunResultStatuses::Row& row : other.rows) {
    if (is_differential_pass(row.status) && paths.count(other.files[row.file]) > 0) ++n;
  }
  return n;
}

// The paths of the files that ran to their end (passed or failed): where a test another run has
// and they lack is new there (RunStatuses::is_new).
std::set<std::string> complete_files(const std::vector<FileRecord>& files) {
  std::set<std::string> out;
  for (const FileRecord& f : files) {
    if (f.status == FileStatus::kPassed || f.status == FileStatus::kFailed) out.insert(f.path);
  }
  return out;
}

// By now's file index: whether that file stopped before its end in the run of files.
std::vector<bool> stopped_files(const RunResultStatuses& now,
                                const std::vector<FileRecord>& files) {
  std::set<std::string_view> stopped;
  for (const FileRecord& f : files) {
    if (stopped_early(f)) stopped.insert(f.path);
  }
  std::vector<bool> out(now.files.size());
  for (std::size_t i = 0; i < now.files.size(); ++i) out[i] = stopped.count(now.files[i]) > 0;
  return out;
}

// Adds counts[i] to the entry of classes[i] of into, for each i that has any.
void add_counts(std::map<std::string, int>& into,
                const std::vector<std::pair<std::string, std::string>>& classes,
                const std::vector<int>& counts) {
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] > 0) into[classes[i].first] += counts[i];
  }
}

// Fills r.files (from files, the run's), r.summary's counts, r.clusters, each file's error and
// the differential and run-to-run counts and lists from the run's results: full holds the cases
// of the rows outcomes marks full, in their order.
void add_files(Report& r, std::vector<FileRecord> files, const RunResultStatuses& now,
               const std::vector<RowOutcome>& outcomes, std::vector<StoredCase> full,
               SourceLinker& links_for) {
  const std::vector<std::size_t> first = file_row_starts(now);
  const fs::path out_dir(r.run.out_dir);
  const fs::path dir = links_for.report_dir();
  std::map<std::string, std::size_t> cluster_index;
  std::size_t next_full = 0;
  constexpr std::size_t kStatuses = 6;  // CaseStatus's values
  std::array<int, kStatuses> run_statuses{};
  std::vector<int> diff_counts(differential_classes().size());
  const std::int8_t renumbered = class_index(differential_classes(), "renumbered");
  std::vector<int> change_counts(change_classes().size());
  for (auto& f : files) {
    ReportFile rf;
    rf.status = f.status ? std::string(to_string(*f.status)) : "not_run";
    if (!f.log_path.empty()) rf.log_link = relative_link(out_dir / f.log_path, dir);
    ++r.summary.files[rf.status];
    ++r.summary.files_total;
    const auto at = std::lower_bound(now.files.begin(), now.files.end(), f.path);
    const std::size_t file = static_cast<std::size_t>(at - now.files.begin());
    const bool has_rows = at != now.files.end() && *at == f.path;
    std::array<int, kStatuses> file_statuses{};
    bool reports_test = false;  // a result that is not the file's import or collection error
    for (std::size_t k = has_rows ? first[file] : 0; has_rows && k < first[file + 1]; ++k) {
      const RunResultStatuses::Row& row = now.rows[k];
      const RowOutcome& o = outcomes[k];
      ++file_statuses[static_cast<std::size_t>(row.status)];
      if (o.diff >= 0) ++diff_counts[static_cast<std::size_t>(o.diff)];
      if (o.diff == renumbered && is_failure(row.status)) ++r.differential->renumbered_failing;
      if (o.cuda_path) count_cuda_path(*r.cuda_path, row, o.baseline);
      if (o.cuda_asked) ++r.cuda_path->asked;
      if (o.change >= 0) ++change_counts[static_cast<std::size_t>(o.change)];
      if (next_full == full.size() || full[next_full].result_id != row.result_id) {
        reports_test = true;  // not read in full: it did not fail
        continue;
      }
      StoredCase& sc = full[next_full++];
      reports_test = reports_test || !is_import_error_case(sc.test);
      ReportCase rc;
      rc.links = links_for(sc.test.source);
      rc.signature = std::move(sc.signature);
      rc.flaky = sc.flaky;
      rc.test = std::move(sc.test);
      if (o.diff >= 0) rc.diff_class = differential_classes()[o.diff].first;
      rc.cuda_path = o.cuda_path;
      rc.cuda_asked = o.cuda_asked;
      if (o.change >= 0) rc.change = change_classes()[o.change].first;
      rc.previous_status = o.previous;
      if (r.differential) list_differential(*r.differential, f.path, rc, o.baseline);
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
    for (std::size_t st = 0; st < kStatuses; ++st) {
      if (file_statuses[st] == 0) continue;
      rf.counts[std::string(to_string(static_cast<CaseStatus>(st)))] = file_statuses[st];
      run_statuses[st] += file_statuses[st];
    }
    if (!reports_test) {
      std::vector<const TestCase*> cases;
      for (const ReportCase& c : rf.cases) cases.push_back(&c.test);
      rf.error = file_error(f, cases);
    }
    rf.file = std::move(f);
    r.files.push_back(std::move(rf));
  }
  for (std::size_t st = 0; st < kStatuses; ++st) {
    if (run_statuses[st] == 0) continue;
    r.summary.tests[std::string(to_string(static_cast<CaseStatus>(st)))] += run_statuses[st];
    r.summary.tests_total += run_statuses[st];
  }
  if (r.differential) add_counts(r.differential->counts, differential_classes(), diff_counts);
  if (r.previous) add_counts(r.previous->counts, change_classes(), change_counts);
}

// A test another run reports that this run does not: a lost test.
struct MissingTest {
  std::string file, classname, name, other_status, message;
  SourceLinks links;
};

// The tests of `other` missing from the run in r.files whose `take` is true, in other's order,
// with why each is missing (missing_reason); counted into each file's `lost` when count_lost.
std::vector<MissingTest> missing_tests(Store& store, Report& r, const RunResultStatuses& now,
                                       const RunResultStatuses& other,
                                       const std::function<bool(const ReportFile&)>& take,
                                       bool count_lost, SourceLinker& links_for) {
  std::map<std::string, ReportFile*> by_path;
  for (ReportFile& f : r.files) {
    if (take(f)) by_path.emplace(f.file.path, &f);
  }
  std::vector<std::string> in_files;
  in_files.reserve(by_path.size());
  for (const auto& [path, f] : by_path) in_files.push_back(path);
  std::vector<std::int64_t> ids;
  for (const auto& row : missing_rows(now, other, in_files)) ids.push_back(row.result_id);
  std::vector<MissingTest> out;
  for (StoredCase& c : store.cases_by_id(ids)) {
    ReportFile* f = by_path.at(c.file);
    if (count_lost) ++f->lost;
    out.push_back({c.file, std::move(c.test.classname), std::move(c.test.name),
                   std::string(to_string(c.test.status)), missing_reason(&f->file, f->error),
                   links_for(c.test.source)});
  }
  return out;
}

// The differential's lost tests (every file of the run) and the tests lost since the previous run
// (files that stopped before their end), listed and counted.
void add_missing(Store& store, Report& r, const RunResultStatuses& now,
                 const RunResultStatuses* baseline, const RunResultStatuses* previous,
                 SourceLinker& links_for) {
  if (r.differential && baseline != nullptr) {
    ReportDifferential& d = *r.differential;
    for (MissingTest& t : missing_tests(
             store, r, now, *baseline, [](const ReportFile&) { return true; }, true, links_for)) {
      d.lost.push_back({std::move(t.file), std::move(t.classname), std::move(t.name),
                        std::move(t.other_status), "absent", std::move(t.message),
                        std::move(t.links)});
    }
    d.counts["lost"] = static_cast<int>(d.lost.size());
    if (d.lost.empty()) d.counts.erase("lost");
  }
  if (r.previous && previous != nullptr) {
    ReportPrevious& p = *r.previous;
    for (MissingTest& t : missing_tests(
             store, r, now, *previous, [](const ReportFile& f) { return stopped_early(f.file); },
             false, links_for)) {
      p.lost.push_back({std::move(t.file), std::move(t.classname), std::move(t.name),
                        std::move(t.other_status), "absent", std::move(t.message),
                        std::move(t.links)});
    }
    p.counts["lost"] = static_cast<int>(p.lost.size());
  }
}

// The gap entry of each listed test that fails or newly skips: the entry of this run whose
// evidence it is; and each CUDA-branch failure's cause, which its entry decides.
void name_gaps(const std::vector<GapEntry>& gaps, ReportDifferential& d) {
  using Key = std::tuple<std::string_view, std::string_view, std::string_view>;
  std::map<Key, const GapEntry*> by_test;
  for (const GapEntry& e : gaps) {
    for (const GapTest& t : e.test_list) by_test.emplace(Key{t.file, t.classname, t.name}, &e);
  }
  for (auto* list : {&d.regressions, &d.cuda_branch_failures, &d.lost, &d.newly_skipped,
                     &d.broken_both, &d.new_failed}) {
    for (auto& t : *list) {
      auto it = by_test.find(Key{t.file, t.classname, t.name});
      const GapEntry* e = it == by_test.end() ? nullptr : it->second;
      if (e != nullptr) t.gap = e->api;
      if (list == &d.cuda_branch_failures) {
        t.cause =
            cuda_branch_cause(t.failure, e != nullptr ? e->api : "", e != nullptr ? e->kind : "");
      }
    }
  }
}

// The run's redirections, one per (shim, API, requested, used), with links to the first call site.
std::vector<ReportRedirection> report_redirections(Store& store, std::int64_t run_id,
                                                   SourceLinker& links_for) {
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
    red.links = links_for(red.first_site);
    out.push_back(std::move(red));
  }
  return out;
}

}  // namespace

CudaPathOfRun cuda_path_of_run(Store& store, const RunRecord& run, const RunResultStatuses& now,
                               const RunResultStatuses* aligned_baseline) {
  CudaPathOfRun out;
  if (run.mode != "shim") return out;
  RunStatuses baseline;
  bool cuda_branches = false;
  if (aligned_baseline != nullptr) {
    out.counts.failed_without_shim = 0;
    baseline = RunStatuses(now, *aligned_baseline, complete_files(store.files(run.baseline_run)));
    const auto b = store.run(run.baseline_run);
    cuda_branches = b && !saw_cuda(environment_json(*b));
  }
  for (const RunResultStatuses::Row& row : now.rows) {
    const std::optional<CaseStatus> before = baseline.find(row);
    const bool is_new = baseline.is_new(row);
    if (aligned_baseline != nullptr && is_failure(row.status)) {
      const std::string cls = baseline.diff_class_of(row, cuda_branches);
      if (cls == "regression") out.regressions.insert(row.result_id);
      if (cls == "cuda_branch_failed") out.cuda_branch_failures.insert(row.result_id);
    }
    if (only_asked_cuda(row, before, is_new)) ++out.counts.asked;
    if (!took_cuda_path(row, before, is_new)) continue;
    count_cuda_path(out.counts, row, before);
    out.results.insert(row.result_id);
  }
  return out;
}

LinkBase run_link_base(const RunRecord& run, const fs::path& report_dir) {
  LinkBase base{run.project_root, {}, fs::absolute(report_dir), run.source_url, run.project_commit};
  const nlohmann::json env = environment_json(run);
  if (auto top = env.find("git_toplevel"); top != env.end() && top->is_string()) {
    base.git_toplevel = top->get<std::string>();
  }
  return base;
}

Report build_report(Store& store, std::int64_t run_id, const fs::path& report_dir,
                    std::int64_t against, ReportCases cases, StatusReader* statuses) {
  auto run = store.run(run_id);
  if (!run) throw UsageError(fmt::format("no run {} in {}", run_id, store.path().string()));
  if (against > 0 && !store.run(against)) {
    throw UsageError(fmt::format("no run {} in {}", against, store.path().string()));
  }
  Report r;
  r.run = *run;
  r.environment = environment_json(*run);
  r.link_note = missing_links_note(*run);
  r.duration_s = seconds_between(run->started_at, run->finished_at);

  const fs::path dir = fs::absolute(report_dir);
  SourceLinker links_for(run_link_base(*run, dir));

  // Every result, by status only; in full, every case or only those the reports show.
  StatusReader own_reader(store, 0);
  StatusReader& reader = statuses != nullptr ? *statuses : own_reader;
  std::vector<StoredCase> full;
  std::shared_ptr<const RunResultStatuses> now_read;
  if (cases == ReportCases::kAll) {
    full = store.cases(run_id);
    now_read = std::make_shared<const RunResultStatuses>(statuses_of(full));
  } else {
    now_read = reader.read(run_id);
  }
  const RunResultStatuses& now = *now_read;
  std::vector<FileRecord> files = store.files(run_id);
  RunStatuses baseline;  // differential runs: the baseline's outcome of every test
  std::shared_ptr<const RunResultStatuses> baseline_read;
  if (run->baseline_run > 0) {
    r.differential.emplace();
    r.differential->baseline_run = run->baseline_run;
    if (auto b = store.run(run->baseline_run)) {
      r.differential->baseline_saw_cuda = saw_cuda(environment_json(*b));
    }
    std::tie(r.differential->baseline_md, r.differential->baseline_html) =
        other_report_links(store, run->baseline_run, dir);
    // Aligned to this run: cases the shim renumbered are the same tests (renumbering_aligned).
    baseline_read = reader.read(run->baseline_run);
    r.differential->baseline_passed = passed_in_files(*baseline_read, files);
    if (auto aligned = renumbering_aligned(store, now, *baseline_read)) {
      r.differential->renumbered_regressions = static_cast<int>(aligned->renumbered_regressions);
      baseline_read = std::make_shared<const RunResultStatuses>(std::move(*aligned));
    }
    baseline = RunStatuses(now, *baseline_read, complete_files(store.files(run->baseline_run)));
  }
  if (run->mode == "shim") {
    r.cuda_path.emplace();
    if (r.differential) r.cuda_path->failed_without_shim = 0;
  }
  RunStatuses previous;  // the run compared with: its previous run, or --against's
  std::shared_ptr<const RunResultStatuses> previous_read;
  std::vector<FileRecord> previous_files;
  const std::int64_t other_run = against > 0 ? against : run->previous_run;
  if (auto prev = other_run > 0 ? store.run(other_run) : std::nullopt) {
    r.previous.emplace();
    r.previous->previous_run = prev->id;
    r.previous->started_at = prev->started_at;
    for (const auto& [cls, meaning] : change_classes()) r.previous->counts[cls] = 0;
    previous_read = reader.read(prev->id);
    previous = RunStatuses(now, *previous_read);
    previous_files = store.files(prev->id);
  }
  std::vector<CaseAttempt> attempts = store.attempts(run_id);
  const std::vector<RowOutcome> outcomes =
      row_outcomes(now, r, baseline, previous, stopped_files(now, previous_files), attempts, cases);
  if (cases != ReportCases::kAll) {
    std::vector<std::int64_t> ids;
    for (std::size_t k = 0; k < outcomes.size(); ++k) {
      if (outcomes[k].full) ids.push_back(now.rows[k].result_id);
    }
    full = store.cases_by_id(ids);
  }
  add_files(r, std::move(files), now, outcomes, std::move(full), links_for);

  for (auto& cl : r.clusters) {
    cl.message = normalize_message(cl.example_message);
  }
  for (GapEntry& e : GapLog(store).for_run(run_id)) {
    (e.kind == kGapEnvironment ? r.environment_entries : r.gaps).push_back(std::move(e));
  }
  for (auto* list : {&r.gaps, &r.environment_entries}) {
    std::stable_sort(list->begin(), list->end(),
                     [](const GapEntry& a, const GapEntry& b) { return a.tests > b.tests; });
  }
  r.redirections = report_redirections(store, run_id, links_for);
  std::stable_sort(r.clusters.begin(), r.clusters.end(),
                   [](const ReportCluster& a, const ReportCluster& b) {
                     return a.tests.size() > b.tests.size();
                   });
  std::stable_sort(r.files.begin(), r.files.end(), [](const ReportFile& a, const ReportFile& b) {
    return file_rank(a.status) < file_rank(b.status);
  });
  add_missing(store, r, now, baseline_read.get(), previous_read.get(), links_for);
  if (r.differential) name_gaps(r.gaps, *r.differential);
  add_run_to_run(r, std::move(attempts), previous_files, previous.failing_files());
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
