#include "runner/cli/show_command.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "base/printable.h"
#include "parsers/text.h"
#include "reports/report.h"
#include "runner/results/differential.h"
#include "runner/results/file_error.h"
#include "runner/results/native_id.h"
#include "runner/results/status.h"
#include "runner/results/store.h"

namespace devshim {

namespace {

using nlohmann::json;

json opt_text(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// The file's error (file_error), from its results.
std::optional<FileError> error_of(const FileRecord& f, const std::vector<StoredCase>& cases) {
  std::vector<const TestCase*> tests;
  tests.reserve(cases.size());
  for (const StoredCase& c : cases) tests.push_back(&c.test);
  return file_error(f, tests);
}

json error_json(const std::optional<FileError>& e) {
  if (!e) return nullptr;
  json frames = json::array();
  for (const TracebackFrame& f : e->frames) frames.push_back(frame_text(f));
  return {{"exception", opt_text(e->exception)},
          {"message", opt_text(e->message)},
          {"frames", std::move(frames)}};
}

// A run's statuses and, when it has a baseline, the baseline's aligned to them (aligned_statuses):
// read once for its lost tests and its CUDA path.
struct AgainstBaseline {
  RunResultStatuses now;
  std::optional<RunResultStatuses> baseline;
};

AgainstBaseline against_baseline(Store& store, const RunRecord& rec) {
  AgainstBaseline out{store.result_statuses(rec.id), std::nullopt};
  if (rec.baseline_run > 0) out.baseline = aligned_statuses(store, out.now, rec.baseline_run);
  return out;
}

// The lost tests of a differential shim run (lost_cases), by file.
std::map<std::string, std::vector<StoredCase>> lost_by_file(Store& store, const RunRecord& rec,
                                                            const AgainstBaseline& against) {
  std::map<std::string, std::vector<StoredCase>> out;
  if (!against.baseline) return out;
  for (auto& c : lost_cases(store, against.now, *against.baseline, store.files(rec.id))) {
    out[c.file].push_back(std::move(c));
  }
  return out;
}

CudaPathOfRun cuda_path_of(Store& store, const RunRecord& rec, const AgainstBaseline& against) {
  return cuda_path_of_run(store, rec, against.now, against.baseline ? &*against.baseline : nullptr);
}

// The run, and its files with their tests, as JSON: every file and test, or those with
// status_filter (a file's status, a test's status or culprit) when it is not empty.
json run_json(Store& store, const RunRecord& rec, const std::string& status_filter) {
  std::map<std::string, std::vector<StoredCase>> cases_by_file;
  for (auto& c : store.cases(rec.id)) cases_by_file[c.file].push_back(std::move(c));
  const AgainstBaseline against = against_baseline(store, rec);
  std::map<std::string, std::vector<StoredCase>> lost = lost_by_file(store, rec, against);
  const CudaPathOfRun cuda_path = cuda_path_of(store, rec, against);
  json files = json::array();
  for (const auto& f : store.files(rec.id)) {
    const std::string fstatus = f.status ? std::string(to_string(*f.status)) : "not_run";
    json tests = json::array();
    for (const auto& c : cases_by_file[f.path]) {
      const TestCase& t = c.test;
      const std::string status(to_string(t.status));
      if (!status_filter.empty() && status != status_filter && t.culprit != status_filter) {
        continue;
      }
      const TestIds ids = test_ids(rec, f.path, t.classname, t.name);
      tests.push_back(
          {{"id", ids.native},
           {"rerun", opt_text(is_failure(t.status) || !t.culprit.empty() ? rerun_command(rec, ids)
                                                                         : std::string())},
           {"classname", t.classname},
           {"name", t.name},
           {"status", status},
           {"culprit", opt_text(t.culprit)},
           {"flaky", c.flaky},
           {"cuda_path", cuda_path.results.count(c.result_id) > 0},
           {"diff_verdict", cuda_path.regressions.count(c.result_id) > 0 ? json("regression")
                            : cuda_path.cuda_branch_failures.count(c.result_id) > 0
                                ? json("cuda_branch_failed")
                                : json(nullptr)},
           {"duration_s", t.duration_s},
           {"message", opt_text(failure_text(t))},
           {"source", t.source.line > 0 ? json{{"path", t.source.path}, {"line", t.source.line}}
                                        : json(nullptr)}});
    }
    json lost_tests = json::array();
    for (const auto& c : lost[f.path]) {
      lost_tests.push_back({{"id", test_label(rec, f.path, c.test.classname, c.test.name)},
                            {"classname", c.test.classname},
                            {"name", c.test.name},
                            {"baseline_status", std::string(to_string(c.test.status))}});
    }
    if (!status_filter.empty() && fstatus != status_filter && tests.empty() &&
        (status_filter != "lost" || lost_tests.empty())) {
      continue;
    }
    files.push_back(
        {{"path", f.path},
         {"status", fstatus},
         {"duration_s", f.duration_s},
         {"note", opt_text(f.note)},
         {"error", error_json(error_of(f, cases_by_file[f.path]))},
         {"lost", rec.baseline_run > 0 ? std::move(lost_tests) : json(nullptr)},
         {"log", f.log_path.empty()
                     ? json(nullptr)
                     : json((std::filesystem::path(rec.out_dir) / f.log_path).string())},
         {"tests", std::move(tests)}});
  }
  return {{"run",
           {{"id", rec.id},
            {"suite", rec.suite},
            {"mode", rec.mode},
            {"status", rec.status},
            {"started_at", rec.started_at},
            {"finished_at", opt_text(rec.finished_at)},
            {"host", rec.host},
            {"jobs", rec.jobs},
            {"project_root", rec.project_root},
            {"project_commit", opt_text(rec.project_commit)},
            {"out_dir", rec.out_dir},
            {"baseline_run", rec.baseline_run > 0 ? json(rec.baseline_run) : json(nullptr)}}},
          {"cuda_path", rec.mode == "shim" ? json{{"tests", cuda_path.counts.tests},
                                                  {"passed", cuda_path.counts.passed},
                                                  {"failed", cuda_path.counts.failed},
                                                  {"skipped", cuda_path.counts.skipped},
                                                  {"asked", cuda_path.counts.asked}}
                                           : json(nullptr)},
          {"files", std::move(files)}};
}

// Under a file's line: what stopped it, the tests of the baseline it lost (listed when
// list_lost), and its log.
void print_file_details(const RunRecord& rec, const FileRecord& f,
                        const std::optional<FileError>& error, const std::vector<StoredCase>& lost,
                        bool list_lost) {
  if (error) {
    std::string what = file_error_text(*error);
    if (what.size() > 300) what = std::string(cut_utf8(what, 297)) + "...";
    fmt::print("            error: {}\n", printable(what));
    for (const TracebackFrame& frame : error->frames) {
      fmt::print("              at {}\n", printable(frame_text(frame)));
    }
  }
  if (!lost.empty()) {
    fmt::print("            lost: {} test{} of baseline run {} missing from this run\n",
               lost.size(), lost.size() == 1 ? "" : "s", rec.baseline_run);
  }
  if (!f.log_path.empty()) {
    fmt::print("            log: {}/{}\n", printable(rec.out_dir), printable(f.log_path));
  }
  for (const StoredCase& c : lost) {
    if (!list_lost) break;
    fmt::print("  {:<9} {}  ({} in baseline run {})\n", "lost",
               printable(test_label(rec, f.path, c.test.classname, c.test.name)),
               to_string(c.test.status), rec.baseline_run);
  }
}

}  // namespace

int show_run(const std::filesystem::path& db_path, const std::string& run,
             const std::string& status_filter, bool all_tests, bool as_json) {
  if (!std::filesystem::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  if (!status_filter.empty() && !parse_file_status(status_filter) &&
      !parse_case_status(status_filter) && status_filter != "not_run" && status_filter != "lost") {
    throw UsageError(fmt::format(
        "unknown status \"{}\" (passed, failed, error, skipped, xfailed, xpassed, timeout, "
        "crashed, no_tests, interrupted, not_run, lost)",
        status_filter));
  }
  Store store(db_path, Store::Purpose::kRead);
  const RunRecord found = store.resolve_run(run);
  if (as_json) {
    fmt::print(
        "{}\n",
        run_json(store, found, status_filter).dump(2, ' ', false, json::error_handler_t::replace));
    return kExitOk;
  }
  const RunRecord* rec = &found;
  const std::int64_t id = found.id;

  fmt::print("run {}  suite {}  mode {}  status {}\n", rec->id, rec->suite, rec->mode, rec->status);
  fmt::print("  started {}  finished {}  host {}  -j {}\n", rec->started_at,
             rec->finished_at.empty() ? "-" : rec->finished_at, rec->host, rec->jobs);
  fmt::print("  project {}{}\n", rec->project_root,
             rec->project_commit.empty() ? "" : " @ " + rec->project_commit.substr(0, 12));
  fmt::print("  output  {}\n", rec->out_dir);

  std::map<std::string, std::vector<StoredCase>> cases_by_file;
  for (auto& c : store.cases(id)) cases_by_file[c.file].push_back(std::move(c));
  const AgainstBaseline against = against_baseline(store, *rec);
  std::map<std::string, std::vector<StoredCase>> lost = lost_by_file(store, *rec, against);
  std::size_t lost_total = 0;
  for (const auto& [path, tests] : lost) lost_total += tests.size();

  const CudaPathOfRun cuda_path = cuda_path_of(store, *rec, against);
  std::map<std::string, int> file_counts, test_counts;
  int files_shown = 0;
  int passed_hidden = 0;
  for (const auto& f : store.files(id)) {
    const std::string fstatus = f.status ? std::string(to_string(*f.status)) : "not_run";
    ++file_counts[fstatus];
    const auto& cases = cases_by_file[f.path];
    std::map<std::string, int> per_file;
    for (const auto& c : cases) {
      ++per_file[std::string(to_string(c.test.status))];
      ++test_counts[std::string(to_string(c.test.status))];
    }
    std::vector<const StoredCase*> shown;
    for (const auto& c : cases) {
      const std::string cstatus(to_string(c.test.status));
      const bool wanted = status_filter.empty()
                              ? (all_tests || c.test.status != CaseStatus::kPassed)
                              : cstatus == status_filter || c.test.culprit == status_filter;
      if (wanted) shown.push_back(&c);
    }
    const std::vector<StoredCase>& file_lost = lost[f.path];
    const bool show_lost = status_filter.empty() || status_filter == "lost";
    if (!status_filter.empty() && fstatus != status_filter && shown.empty() &&
        (status_filter != "lost" || file_lost.empty())) {
      continue;
    }
    // A passed file with nothing to show is one of thousands on a real suite: counted, not listed.
    if (status_filter.empty() && !all_tests && shown.empty() && file_lost.empty() &&
        f.status == FileStatus::kPassed) {
      ++passed_hidden;
      continue;
    }
    ++files_shown;
    const std::optional<FileError> error = error_of(f, cases);
    fmt::print("\n{:<11} {}  {:.1f}s  {}{}\n", fstatus, printable(f.path), f.duration_s,
               error              ? std::string("no test reported")
               : per_file.empty() ? "no tests parsed"
                                  : counts_text(per_file),
               f.note.empty() ? "" : "  (" + printable(f.note) + ")");
    print_file_details(*rec, f, error, file_lost, show_lost);
    for (const StoredCase* c : shown) {
      const TestCase& t = c->test;
      std::string where =
          t.source.line > 0 ? fmt::format("  {}:{}", t.source.path, t.source.line) : std::string();
      std::string what = failure_text(t);
      if (what.size() > 160) what = std::string(cut_utf8(what, 157)) + "...";
      const TestIds ids = test_ids(*rec, f.path, t.classname, t.name);
      const char* verdict = cuda_path.regressions.count(c->result_id) > 0 ? " [regression]"
                            : cuda_path.cuda_branch_failures.count(c->result_id) > 0
                                ? " [CUDA-branch failure]"
                                : "";
      fmt::print("  {:<9} {}{}{}{}{}\n", to_string(t.status), printable(ids.native),
                 t.culprit.empty() ? "" : " [" + t.culprit + "]",
                 cuda_path.results.count(c->result_id) > 0 ? " [CUDA path]" : "", verdict,
                 printable(where));
      if (!what.empty()) fmt::print("            {}\n", printable(what));
      if (is_failure(t.status) || !t.culprit.empty()) {
        if (const std::string command = rerun_command(*rec, ids); !command.empty()) {
          fmt::print("            re-run: {}\n", printable(command));
        }
      }
    }
  }
  if (!status_filter.empty() && files_shown == 0) {
    fmt::print("\nNo file or test of run {} is {}.\n", id, status_filter);
  }
  if (passed_hidden > 0) {
    fmt::print("\n{} passed file{} not listed (--all lists them with their tests)\n", passed_hidden,
               passed_hidden == 1 ? "" : "s");
  }
  fmt::print("\nfiles: {}\ntests: {}\n", counts_text(file_counts),
             test_counts.empty() ? "none parsed" : counts_text(test_counts));
  if (lost_total > 0) {
    fmt::print(
        "lost:  {} test{} of baseline run {} missing from this run (counted as regressions)\n",
        lost_total, lost_total == 1 ? "" : "s", rec->baseline_run);
  }
  if (rec->baseline_run > 0 && rec->mode == "shim") {
    const std::size_t r = cuda_path.regressions.size(), b = cuda_path.cuda_branch_failures.size();
    fmt::print(
        "against baseline run {}: {} regression{} (failing on code that ran both ways), {} "
        "CUDA-branch failure{} (failing on a CUDA path the baseline could not take)\n",
        rec->baseline_run, r, r == 1 ? "" : "s", b, b == 1 ? "" : "s");
  }
  if (rec->mode == "shim") fmt::print("{}\n", cuda_path_text(cuda_path.counts));
  if (rec->status == "interrupted" && rec->framework != "imported") {
    fmt::print("Interrupted: finish it with  runner {} --resume {}\n", rec->suite_file, id);
  }
  return kExitOk;
}

}  // namespace devshim
