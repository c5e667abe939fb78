// The gap log's attribution of a run's cases and its storage. One cohesive thing (about 800
// lines): update_from_run gathers each entry's evidence from the run and its baseline
// (attribute_case, file errors, tests lost or moved) and writes it in the same pass, and the
// entries' queries read what it wrote; the rules that name an API are parsers/gap_attribution.h's.
#include "runner/results/gap_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "base/error.h"
#include "parsers/gap_attribution.h"
#include "parsers/python_source.h"
#include "parsers/read_file.h"
#include "parsers/signature.h"
#include "parsers/text.h"
#include "runner/results/cuda_branch.h"
#include "runner/results/differential.h"
#include "runner/results/file_error.h"
#include "runner/results/gap_actions.h"

namespace devshim {

namespace {

constexpr const char* kColumns =
    "g.suite, g.api, g.kind, g.status, g.status_by, g.severity, g.severity_by, g.equivalent, "
    "g.action, g.note, g.why, g.first_seen_run, g.last_seen_run, g.fixed_in_run, g.first_seen_at, "
    "g.last_seen_at, g.updated_at, g.action_by, g.equivalent_by, g.setting, g.trial_setting, "
    "g.trial_run, g.trial_tests, g.trial_passed, "
    "(SELECT COUNT(*) FROM gap_tests t WHERE t.suite = g.suite AND t.api = g.api "
    " AND t.run_id = g.last_seen_run), "
    "(SELECT COUNT(DISTINCT t.file) FROM gap_tests t WHERE t.suite = g.suite AND t.api = g.api "
    " AND t.run_id = g.last_seen_run)";

bool one_of(const std::string& v, std::initializer_list<const char*> allowed) {
  return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return v == a; });
}

// The same suite and the same targets: runs whose absence of a gap says it is fixed.
bool same_scope(const RunRecord& a, const RunRecord& b) {
  return a.suite == b.suite && a.targets == b.targets;
}

// The first line of `text`, at most `max` bytes, cut at a character boundary.
std::string first_line(std::string_view text, std::size_t max) {
  text = text.substr(0, text.find('\n'));
  return text.size() > max ? std::string(cut_utf8(text, max)) + "…" : std::string(text);
}

int severity_rank(const std::string& s) {
  return s == "critical" ? 0 : s == "high" ? 1 : s == "medium" ? 2 : 3;
}

}  // namespace

std::string computed_severity(int tests, int files) {
  if (tests >= 20 || files >= 5) return "critical";
  if (tests >= 5) return "high";
  if (tests >= 2) return "medium";
  return "low";
}

namespace {

// The text of a frame's file (relative paths: to project_root; an absolute one stays), read once
// into `sources`; empty when it cannot be read (the log's text is then all there is).
const std::string& source_of(std::string_view frame_file, const std::filesystem::path& project_root,
                             std::map<std::string, std::string>& sources) {
  const std::filesystem::path file = project_root / frame_file;
  auto [it, added] = sources.try_emplace(file.string());
  if (added) {
    try {
      it->second = read_file(file).value_or("");
    } catch (const Error&) {
      // Unreadable: as if absent.
    }
  }
  return it->second;
}

}  // namespace

std::string statement_in_source(const TestCase& test, const std::filesystem::path& project_root,
                                std::map<std::string, std::string>& sources) {
  if (!is_failure(test.status)) return "";
  const auto frame = frame_of_cut_statement(test.exception, test.message, test.traceback);
  if (!frame) return "";
  return statement_at(source_of(frame->file, project_root, sources), frame->line);
}

std::string cuda_branch_in_source(const TestCase& test, const std::filesystem::path& project_root,
                                  std::map<std::string, std::string>& sources) {
  if (!is_failure(test.status)) return "";
  for (const TracebackFrame& frame : innermost_frames(test.traceback, 32)) {
    // torch's and the shim's own branches are theirs to carry, not code the test chose to run.
    if (frame.line <= 0 || !module_of_file(frame.file).empty()) continue;
    const std::string& source = source_of(frame.file, project_root, sources);
    if (const int line = cuda_branch_at(source, frame.line); line > 0) {
      return fmt::format("{}:{}", frame.file, line);
    }
  }
  return "";
}

int mark_cuda_branch_failures(std::vector<TestCase>& cases,
                              const std::filesystem::path& project_root) {
  std::map<std::string, std::string> sources;
  int marked = 0;
  for (TestCase& c : cases) {
    if (!is_failure(c.status)) continue;
    c.fails_in_cuda_branch = !cuda_branch_in_source(c, project_root, sources).empty();
    if (c.fails_in_cuda_branch) ++marked;
  }
  return marked;
}

std::optional<GapAttribution> attribute_case(const TestCase& test, bool has_baseline,
                                             std::optional<CaseStatus> baseline,
                                             std::string_view failing_statement,
                                             std::string_view cuda_branch) {
  if (is_failure(test.status)) {
    // A test that ran a child process which failed: the child's failure is the one to attribute.
    const std::optional<ChildFailure> child = child_failure(test.exception, test.traceback);
    const std::string_view exception = child ? child->exception : test.exception;
    const std::string_view message = child ? child->message : test.message;
    if (auto a = attribute_failure(exception, message, child ? child->traceback : test.traceback,
                                   child ? std::string_view() : failing_statement)) {
      if (child) a->why = fmt::format("in its child process ({}): {}", test.exception, a->why);
      if (a->api == kGapStrictXpass && params_name_cpu_and_gpu(test.name)) {
        a->api = std::string(kGapCrossDevice);
        a->why +=
            ", and its parameters name the CPU and a GPU: what it expects to fail mixes two "
            "devices, and the shim puts every tensor on one";
      }
      return a;
    }
    const bool in_branch = !child && !cuda_branch.empty();
    const std::string shown = first_line(normalize_message(first_line(message, 1000)), 100);
    const std::string what = exception.empty() ? std::string("failure") : std::string(exception);
    if (!in_branch) {
      return GapAttribution{
          fmt::format("unattributed {}{}: {}", what, child ? " in a child process" : "", shown),
          std::string(kGapUnattributed),
          fmt::format(
              "no rule names a torch API: the failure{} points nowhere into torch or the shim",
              child ? " of the child process the test ran" : "")};
    }
    const std::string where =
        cuda_branch == kRecordedCudaBranch
            ? std::string(
                  "the shim's record says the test did device work on a CUDA path, "
                  "which its baseline, seeing no CUDA, could not take")
            : fmt::format("the failing code runs only where CUDA is there (the condition at {})",
                          cuda_branch);
    const FailureKind kind = failure_kind(test);
    std::string api = fmt::format("unattributed {}{}: {}", what, kInCudaBranch, shown);
    if (kind == FailureKind::kOwnError) {
      api = fmt::format("{}: {}: {}", kOwnErrorInCudaBranch, what, shown);
    } else if (kind == FailureKind::kNumeric) {
      api = fmt::format("{}: {}", kNumericInCudaBranch, shown);
    }
    return GapAttribution{
        std::move(api), std::string(kGapUnattributed),
        fmt::format("no rule names a torch API, and {}, so the run without the shim never ran "
                    "it{}",
                    where,
                    kind == FailureKind::kOwnError
                        ? "; its error is one the test's own code raises on any device"
                    : kind == FailureKind::kNumeric ? "; its values differ beyond a tolerance"
                                                    : "")};
  }
  if (!has_baseline || !baseline || diff_class(baseline, test.status) != "newly_skipped") {
    return std::nullopt;
  }
  const std::string reason = first_line(test.message, 100);
  if (skip_wants_no_gpu(reason)) {
    return GapAttribution{"newly skipped: " + reason, std::string(kGapMasqueradeSkip),
                          "expected: the test skips when a GPU is there, and the CUDA masquerade "
                          "says one is"};
  }
  return GapAttribution{"newly skipped: " + (reason.empty() ? std::string("(no reason)") : reason),
                        std::string(kGapNewlySkipped), "passed without the shim, skips with it"};
}

namespace {

// One entry's evidence in a run: how it was attributed, the torch API a file error points at,
// and its tests.
struct Seen {
  GapAttribution attribution;
  std::string attributed;
  std::vector<GapTest> tests;
};

// The entry of a file's error: "file error: <Exception>: <normalized first line>".
std::string file_error_api(const FileError& e) {
  const std::string message = first_line(normalize_message(first_line(e.message, 1000)), 100);
  return e.exception.empty() ? "file error: " + message
                             : fmt::format("file error: {}: {}", e.exception, message);
}

// The entry of a file's error that its baseline had too: "environment: <Exception>: <message>".
std::string environment_api(const FileError& e) {
  return "environment: " + file_error_api(e).substr(std::string_view("file error: ").size());
}

// Of `errors` (files of a shim run that reported no test), the paths whose file reported no test
// in the baseline either, with the same error (exception and normalized message): the suite's
// environment, not the shim. Reads the baseline's results of those files only.
std::set<std::string> failing_so_without_the_shim(Store& store, std::int64_t baseline_run,
                                                  const RunResultStatuses& baseline,
                                                  const std::map<std::string, FileError>& errors) {
  std::set<std::string> same;
  if (errors.empty()) return same;
  std::vector<std::int64_t> ids;
  for (const RunResultStatuses::Row& row : baseline.rows) {
    if (errors.count(baseline.files[row.file]) > 0) ids.push_back(row.result_id);
  }
  std::map<std::string, std::vector<StoredCase>> cases;
  for (StoredCase& c : store.cases_by_id(ids)) cases[c.file].push_back(std::move(c));
  for (const FileRecord& f : store.files(baseline_run)) {
    const auto shim = errors.find(f.path);
    if (shim == errors.end()) continue;
    std::vector<const TestCase*> tests;
    for (const StoredCase& c : cases[f.path]) tests.push_back(&c.test);
    const std::optional<FileError> before = file_error(f, tests);
    if (before && file_error_api(*before) == file_error_api(shim->second)) same.insert(f.path);
  }
  return same;
}

// Files that reported no test, with their error, and the lost tests of every file (`lost`,
// lost_cases): entries. A file whose error its baseline had too (`environment`) is an
// environment entry.
void add_file_evidence(const std::vector<StoredCase>& lost_tests,
                       const std::vector<FileRecord>& records,
                       const std::map<std::string, FileError>& errors,
                       const std::set<std::string>& environment,
                       std::map<std::string, Seen>& seen) {
  std::map<std::string, std::vector<GapTest>> lost;
  for (const StoredCase& c : lost_tests) {
    lost[c.file].push_back({c.file, c.test.classname, c.test.name});
  }
  for (const auto& [path, e] : errors) {
    if (environment.count(path) > 0) {
      Seen& s = seen[environment_api(e)];
      if (s.tests.empty()) {
        s.attribution = {environment_api(e), std::string(kGapEnvironment),
                         "fails without the shim too: the file reported no test without the shim "
                         "either, with the same error"};
      }
      s.tests.push_back({path, "", kGapFileTest});
      continue;
    }
    Seen& s = seen[file_error_api(e)];
    if (s.tests.empty()) {
      const auto at = attribute_failure(e.exception, e.message, e.traceback);
      s.attributed = at ? at->api : "";
      s.attribution = {file_error_api(e), std::string(kGapFileError),
                       "the file reported no test: its import or collection failed" +
                           (at ? " (" + at->why + ": " + at->api + ")" : std::string())};
    }
    auto it = lost.find(path);
    if (it == lost.end() || it->second.empty()) {
      s.tests.push_back({path, "", kGapFileTest});
    } else {
      s.tests.insert(s.tests.end(), it->second.begin(), it->second.end());
      lost.erase(it);
    }
  }
  if (lost.empty()) return;
  std::map<std::string, const FileRecord*> files;
  for (const FileRecord& f : records) files.emplace(f.path, &f);
  for (const auto& [path, tests] : lost) {
    const auto f = files.find(path);
    const FileRecord* file = f == files.end() ? nullptr : f->second;
    const std::string api = "lost: " + missing_reason(file, std::nullopt);
    Seen& s = seen[api];
    if (s.tests.empty()) {
      const bool stopped = file == nullptr || stopped_early(*file);
      s.attribution = {api, std::string(stopped ? kGapFileError : kGapUnattributed),
                       "the baseline reported these tests; this run did not"};
    }
    s.tests.insert(s.tests.end(), tests.begin(), tests.end());
  }
}

// The indexes of a shim run's `cases` that fail with the same failure signature as the same test
// in its baseline (`baseline`: aligned_statuses): the shim changed nothing there (the hub out of
// reach, the project's own bug), so they are no evidence of a gap. Reads the texts of those
// baseline results only.
std::set<std::size_t> failing_as_without_the_shim(Store& store,
                                                  const std::vector<StoredCase>& cases,
                                                  const RunResultStatuses& baseline) {
  std::map<std::pair<std::string_view, std::int64_t>, std::int64_t> failed_before;
  for (const RunResultStatuses::Row& row : baseline.rows) {
    if (is_failure(row.status) && row.signature) {
      failed_before.emplace(
          std::pair<std::string_view, std::int64_t>(baseline.files[row.file], row.test_id),
          row.result_id);
    }
  }
  std::vector<std::size_t> candidates;
  std::vector<std::int64_t> ids;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const StoredCase& c = cases[k];
    if (!is_failure(c.test.status) || c.signature.empty()) continue;
    const auto it = failed_before.find({c.file, c.test_id});
    if (it == failed_before.end()) continue;
    candidates.push_back(k);
    ids.push_back(it->second);
  }
  std::set<std::size_t> same;
  if (ids.empty()) return same;
  std::map<std::int64_t, std::string> signature_of;
  for (StoredCase& b : store.cases_by_id(ids)) {
    signature_of.emplace(b.result_id, std::move(b.signature));
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto it = signature_of.find(ids[i]);
    if (it != signature_of.end() && it->second == cases[candidates[i]].signature) {
      same.insert(candidates[i]);
    }
  }
  return same;
}

// Every failing and newly skipped test of a run (`cases`, of its `files`), its file errors and
// lost tests → entries. A test that fails as it did without the shim is none
// (failing_as_without_the_shim).
std::map<std::string, Seen> evidence_of(Store& store, const RunRecord& run,
                                        const std::vector<FileRecord>& files,
                                        const std::vector<StoredCase>& cases) {
  const RunResultStatuses statuses = statuses_of(cases);
  // The baseline's status of each test, to tell newly skipped tests (differential runs only).
  const bool has_baseline = run.baseline_run > 0;
  const RunResultStatuses baseline_statuses =
      has_baseline ? aligned_statuses(store, statuses, run.baseline_run) : RunResultStatuses();
  const RunStatuses baseline =
      has_baseline ? RunStatuses(statuses, baseline_statuses) : RunStatuses();
  // A baseline that saw CUDA ran the CUDA branches itself (saw_cuda).
  const std::optional<RunRecord> baseline_run =
      has_baseline ? store.run(run.baseline_run) : std::nullopt;
  const bool cuda_branches = baseline_run && !saw_cuda(environment_json(*baseline_run));
  std::map<std::string, std::vector<const TestCase*>> by_file;
  for (const StoredCase& c : cases) by_file[c.file].push_back(&c.test);
  std::map<std::string, FileError> errors;
  for (const FileRecord& f : files) {
    if (auto e = file_error(f, by_file[f.path])) errors.emplace(f.path, std::move(*e));
  }
  const std::set<std::size_t> unchanged =
      has_baseline ? failing_as_without_the_shim(store, cases, baseline_statuses)
                   : std::set<std::size_t>();
  std::map<std::string, Seen> seen;
  std::map<std::string, std::string> sources;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const StoredCase& c = cases[k];
    // A file's import error is its file error entry's, not a test's.
    if (errors.count(c.file) > 0 && is_import_error_case(c.test)) continue;
    if (unchanged.count(k) > 0) continue;
    const std::optional<CaseStatus> before = baseline.find(statuses.rows[k]);
    const std::string statement = statement_in_source(c.test, run.project_root, sources);
    auto a = attribute_case(c.test, has_baseline, before, statement);
    if (!a) continue;
    if (a->kind == kGapUnattributed && is_failure(c.test.status)) {
      // Only a failure no rule names reads its frames' sources for a CUDA-only branch; else the
      // shim's record may say the test did device work its baseline could not (a CUDA-branch
      // failure, diff_class).
      std::string branch = cuda_branch_in_source(c.test, run.project_root, sources);
      if (branch.empty() && cuda_branches && c.test.cuda_contact == CudaContact::kDeviceWork &&
          before && is_differential_pass(*before)) {
        branch = kRecordedCudaBranch;
      }
      if (!branch.empty()) a = attribute_case(c.test, has_baseline, before, statement, branch);
    }
    auto& s = seen[a->api];
    if (s.tests.empty()) s.attribution = *a;
    s.tests.push_back({c.file, c.test.classname, c.test.name});
  }
  add_file_evidence(
      has_baseline ? lost_cases(store, statuses, baseline_statuses, files)
                   : std::vector<StoredCase>(),
      files, errors,
      has_baseline ? failing_so_without_the_shim(store, run.baseline_run, baseline_statuses, errors)
                   : std::set<std::string>(),
      seen);
  return seen;
}

}  // namespace

std::string gap_trial_text(const GapTrial& t) {
  if (t.setting.empty()) return "";
  return fmt::format("{}: {} of {} pass{}", t.setting, t.passed, t.tests,
                     t.run > 0 ? fmt::format(" (run {})", t.run) : "");
}

nlohmann::json gap_trial_json(const GapTrial& t) {
  if (t.setting.empty()) return nullptr;
  return {{"setting", t.setting},
          {"run", t.run > 0 ? nlohmann::json(t.run) : nlohmann::json(nullptr)},
          {"tests", t.tests},
          {"passed", t.passed}};
}

std::map<std::string, int> lost_by_file(const GapEntry& entry) {
  std::map<std::string, int> out;
  if (entry.kind != kGapFileError) return out;
  for (const GapTest& t : entry.test_list) {
    int& n = out[t.file];
    if (t.name != kGapFileTest || !t.classname.empty()) ++n;
  }
  return out;
}

namespace {

// What a run ran: its tests and its files (a file error's kGapFileTest stands for its file).
class RanIn {
 public:
  RanIn(const std::vector<FileRecord>& files, const std::vector<StoredCase>& cases) {
    for (const StoredCase& c : cases) tests_.insert({c.file, c.test.classname, c.test.name});
    for (const FileRecord& f : files) files_.insert(f.path);
  }
  bool ran(const GapTest& t) const {
    if (t.name == kGapFileTest && t.classname.empty()) return files_.count(t.file) > 0;
    return tests_.count({t.file, t.classname, t.name}) > 0;
  }

 private:
  std::set<std::tuple<std::string, std::string, std::string>> tests_;
  std::set<std::string> files_;
};

// Which tests of a run fail as they did in an earlier run, under another entry now: evidence
// that an entry's failure was attributed elsewhere (GapLog::update_from_run), not fixed.
class MovedFailures {
 public:
  using TestKey = std::tuple<std::string, std::string, std::string>;

  MovedFailures(Store& store, const std::map<std::string, Seen>& seen,
                const std::vector<StoredCase>& cases)
      : store_(store) {
    for (const StoredCase& c : cases) {
      if (!c.signature.empty()) now_[{c.file, c.test.classname, c.test.name}] = c.signature;
    }
    for (const auto& [api, s] : seen) {
      for (const GapTest& t : s.tests) {
        if (now_.count({t.file, t.classname, t.name}) > 0) {
          evidence_.insert({t.file, t.classname, t.name});
        }
      }
    }
  }

  // Whether the test is evidence of an entry of this run and fails with the signature it had in
  // earlier_run (that run's cases read once, when first asked).
  bool moved(std::int64_t earlier_run, const TestKey& key) {
    if (evidence_.count(key) == 0) return false;
    auto [it, fresh] = earlier_.try_emplace(earlier_run);
    if (fresh) {
      for (const StoredCase& c : store_.cases(earlier_run)) {
        if (!c.signature.empty()) it->second[{c.file, c.test.classname, c.test.name}] = c.signature;
      }
    }
    auto was = it->second.find(key);
    return was != it->second.end() && was->second == now_.at(key);
  }

 private:
  Store& store_;
  std::map<TestKey, std::string> now_;  // failing tests of the run → signature
  std::set<TestKey> evidence_;
  std::map<std::int64_t, std::map<TestKey, std::string>> earlier_;
};

}  // namespace

int GapLog::update_from_run(std::int64_t run_id) {
  const auto run = store_.run(run_id);
  if (!run || run->mode != "shim" || run->status == "interrupted" || run->status == "running") {
    return 0;
  }
  const std::vector<FileRecord> files = store_.files(run_id);
  const std::vector<StoredCase> cases = store_.cases(run_id);
  const std::map<std::string, Seen> seen = evidence_of(store_, *run, files, cases);
  const RanIn ran(files, cases);
  const ShimSettings settings = shim_settings_of(environment_json(*run));

  const std::string& suite = run->suite;
  const std::string now = iso8601_utc_now();
  sql::Transaction tx(db_);
  sql::Statement upsert(
      db_,
      "INSERT INTO gaps (api, kind, why, first_seen_run, last_seen_run, first_seen_at, "
      "last_seen_at, updated_at, action, equivalent, setting, suite) "
      "VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?5, ?5, ?6, ?7, ?8, ?9) "
      "ON CONFLICT (suite, api) DO UPDATE SET kind = excluded.kind, why = excluded.why, "
      "last_seen_run = excluded.last_seen_run, last_seen_at = excluded.last_seen_at, "
      "updated_at = excluded.updated_at, "
      "status = CASE WHEN status_by = 'auto' THEN 'open' ELSE status END, "
      "fixed_in_run = CASE WHEN status_by = 'auto' THEN NULL ELSE fixed_in_run END, "
      "action = CASE WHEN action_by = 'auto' THEN excluded.action ELSE action END, "
      "equivalent = CASE WHEN equivalent_by = 'auto' THEN excluded.equivalent "
      "ELSE equivalent END, setting = excluded.setting");
  sql::Statement test(db_,
                      "INSERT OR IGNORE INTO gap_tests (api, run_id, file, classname, name, "
                      "carried_from, suite) VALUES (?,?,?,?,?,?,?)");
  sql::Statement last_seen(db_, "SELECT last_seen_run FROM gaps WHERE api = ? AND suite = ?");
  sql::Statement earlier_tests(db_,
                               "SELECT file, classname, name, coalesce(carried_from, run_id) "
                               "FROM gap_tests WHERE api = ? AND run_id = ? AND suite = ?");
  auto or_null = [](const std::string& text) {
    return text.empty() ? std::nullopt : std::optional<std::string>(text);
  };
  for (const auto& [api, s] : seen) {
    // The tests the entry's last run of other targets showed, that this run did not run.
    std::vector<GapTest> carried;
    last_seen.bind(1, api).bind(2, suite);
    const std::int64_t previous = last_seen.step() ? last_seen.opt_int64(0).value_or(0) : 0;
    last_seen.reset();
    const auto earlier = previous > 0 && previous < run_id ? store_.run(previous) : std::nullopt;
    if (earlier && earlier->suite == run->suite && !same_scope(*earlier, *run)) {
      earlier_tests.bind(1, api).bind(2, previous).bind(3, suite);
      while (earlier_tests.step()) {
        GapTest t{earlier_tests.text(0), earlier_tests.text(1), earlier_tests.text(2),
                  earlier_tests.int64(3)};
        if (!ran.ran(t)) carried.push_back(std::move(t));
      }
      earlier_tests.reset();
    }
    const GapAction what = gap_action(s.attribution.kind, api, s.attributed, settings);
    upsert.bind(1, api)
        .bind(2, s.attribution.kind)
        .bind(3, s.attribution.why)
        .bind(4, run_id)
        .bind(5, now)
        .bind(6, what.action)
        .bind(7, or_null(what.equivalent))
        .bind(8, or_null(what.setting))
        .bind(9, suite)
        .run();
    for (const auto& t : s.tests) {
      test.bind(1, api).bind(2, run_id).bind(3, t.file).bind(4, t.classname).bind(5, t.name);
      test.bind_null(6).bind(7, suite).run();
    }
    for (const auto& t : carried) {
      test.bind(1, api).bind(2, run_id).bind(3, t.file).bind(4, t.classname).bind(5, t.name);
      test.bind(6, t.carried_from).bind(7, suite).run();
    }
    refresh_severity(suite, api);
  }
  // Open entries last seen in an earlier run of the same scope, and not seen now: fixed, unless
  // a test of theirs fails now with the same signature as an evidence of another entry (the
  // rules of a newer devshim attribute the same failure elsewhere): then the entry is dropped
  // when no person touched it, and left as it is when one did. A test that fails differently
  // now got past the entry's failure: that is a fix.
  MovedFailures moved_failures(store_, seen, cases);
  sql::Statement open(db_,
                      "SELECT api, last_seen_run, status_by = 'auto' AND severity_by = 'auto' "
                      "AND action_by = 'auto' AND equivalent_by = 'auto' AND note IS NULL "
                      "FROM gaps WHERE status = 'open' AND status_by = 'auto' AND kind != "
                      "'unpatched' AND last_seen_run IS NOT NULL AND last_seen_run < ? "
                      "AND suite = ?");
  open.bind(1, run_id).bind(2, suite);
  std::vector<std::tuple<std::string, std::int64_t, bool>> candidates;
  while (open.step()) candidates.emplace_back(open.text(0), open.int64(1), open.int64(2) != 0);
  open.reset();
  sql::Statement fix(db_,
                     "UPDATE gaps SET status = 'fixed', fixed_in_run = ?, updated_at = ? "
                     "WHERE api = ? AND suite = ?");
  sql::Statement drop(db_, "DELETE FROM gaps WHERE api = ? AND suite = ?");
  for (const auto& [api, last, untouched] : candidates) {
    if (seen.count(api) > 0) continue;
    auto earlier = store_.run(last);
    if (!earlier || !same_scope(*earlier, *run)) continue;
    bool moved = false;
    earlier_tests.bind(1, api).bind(2, last).bind(3, suite);
    while (!moved && earlier_tests.step()) {
      moved = moved_failures.moved(
          earlier_tests.int64(3),
          {earlier_tests.text(0), earlier_tests.text(1), earlier_tests.text(2)});
    }
    earlier_tests.reset();
    if (moved && untouched) {
      drop.bind(1, api).bind(2, suite).run();
    } else if (!moved) {
      fix.bind(1, run_id).bind(2, now).bind(3, api).bind(4, suite).run();
    }
  }
  tx.commit();
  return static_cast<int>(seen.size());
}

void GapLog::record_trial(const std::string& suite, const std::string& api, std::int64_t run_id,
                          const std::string& setting, int tests, int passed) {
  sql::Statement s(db_,
                   "UPDATE gaps SET trial_setting = ?, trial_run = ?, trial_tests = ?, "
                   "trial_passed = ?, updated_at = ? WHERE api = ? AND suite = ?");
  s.bind(1, setting).bind(2, run_id).bind(3, tests).bind(4, passed).bind(5, iso8601_utc_now());
  s.bind(6, api).bind(7, suite).run();
}

void GapLog::refresh_severity(const std::string& suite, const std::string& api) {
  sql::Statement s(db_,
                   "UPDATE gaps SET severity = ? WHERE api = ? AND suite = ? AND "
                   "severity_by = 'auto'");
  auto e = entry(api, suite);
  if (!e) return;
  // An uncarried API no test tripped over, an expected skip and the tests' own checks and errors
  // weigh least; an entry no change of the shim can fix weighs at most medium, however many
  // tests it holds.
  const bool low = (e->kind == kGapUnpatched && e->tests == 0) || e->kind == kGapMasqueradeSkip ||
                   gap_tests_own(e->kind, api);
  std::string sev = low ? std::string("low") : computed_severity(e->tests, e->files);
  if (severity_rank(sev) < severity_rank("medium") && gap_beyond_the_shim(e->kind, api)) {
    sev = "medium";
  }
  s.bind(1, sev).bind(2, api).bind(3, suite).run();
}

std::pair<int, int> GapLog::apply_scan(const std::vector<std::string>& surface,
                                       const std::vector<std::string>& carried) {
  const std::set<std::string> carried_set(carried.begin(), carried.end());
  const std::string now = iso8601_utc_now();
  int added = 0, fixed = 0;
  sql::Transaction tx(db_);
  sql::Statement insert(db_,
                        "INSERT OR IGNORE INTO gaps (suite, api, kind, why, first_seen_at, "
                        "last_seen_at, updated_at) VALUES ('', ?1, 'unpatched', "
                        "'torch has it; the shim does not declare it', ?2, ?2, ?2)");
  sql::Statement reopen(db_,
                        "UPDATE gaps SET status = 'open', fixed_in_run = NULL, last_seen_at = ?2, "
                        "updated_at = ?2 WHERE suite = '' AND api = ?1 AND kind = 'unpatched' AND "
                        "status_by = 'auto' AND status = 'fixed'");
  for (const auto& api : surface) {
    if (carried_set.count(api) > 0) continue;
    insert.bind(1, api).bind(2, now).run();
    if (db_.changes() > 0) {
      ++added;
    } else {
      reopen.bind(1, api).bind(2, now).run();
    }
  }
  sql::Statement unpatched(db_,
                           "SELECT api FROM gaps WHERE suite = '' AND kind = 'unpatched' AND "
                           "status = 'open' AND status_by = 'auto'");
  std::vector<std::string> open;
  while (unpatched.step()) open.push_back(unpatched.text(0));
  unpatched.reset();
  sql::Statement fix(db_,
                     "UPDATE gaps SET status = 'fixed', updated_at = ? WHERE suite = '' AND "
                     "api = ?");
  for (const auto& api : open) {
    if (carried_set.count(api) == 0) continue;
    fix.bind(1, now).bind(2, api).run();
    ++fixed;
  }
  tx.commit();
  return {added, fixed};
}

std::string GapLog::suite_of(const std::string& api, const std::optional<std::string>& suite) {
  if (suite) return *suite;
  sql::Statement s(db_, "SELECT suite FROM gaps WHERE api = ? ORDER BY suite");
  s.bind(1, api);
  std::vector<std::string> suites;
  while (s.step()) suites.push_back(s.text(0));
  if (suites.size() <= 1) return suites.empty() ? std::string() : suites.front();
  std::string names;
  for (const std::string& name : suites) {
    names += (names.empty() ? "" : ", ") + (name.empty() ? std::string("\"\" (no suite)") : name);
  }
  throw UsageError(fmt::format("gaps: \"{}\" is an entry of {} suites ({}): name one with --suite",
                               api, suites.size(), names));
}

std::string GapLog::set(const std::string& api, const GapEdit& edit) {
  if (api.empty()) throw UsageError("gaps set: the API must not be empty");
  if (edit.severity && !one_of(*edit.severity, {"critical", "high", "medium", "low", "auto"})) {
    throw UsageError(
        fmt::format("gaps set: --severity must be critical, high, medium, low or auto, not \"{}\"",
                    *edit.severity));
  }
  if (edit.status && !one_of(*edit.status, {"open", "fixed", "wontfix", "auto"})) {
    throw UsageError(fmt::format(
        "gaps set: --status must be open, fixed, wontfix or auto, not \"{}\"", *edit.status));
  }
  if (edit.kind &&
      !one_of(*edit.kind, {"failing", "unpatched", "unsupported_op", "cuda_only", "unattributed",
                           "newly_skipped", "masquerade_skip", "file_error", "environment"})) {
    throw UsageError(fmt::format(
        "gaps set: --kind must be failing, unpatched, unsupported_op, cuda_only, unattributed, "
        "newly_skipped, masquerade_skip, file_error or environment, not \"{}\"",
        *edit.kind));
  }
  std::string suite = suite_of(api, edit.suite);
  const std::string now = iso8601_utc_now();
  sql::Transaction tx(db_);
  sql::Statement insert(
      db_,
      "INSERT OR IGNORE INTO gaps (api, kind, why, first_seen_at, last_seen_at, "
      "updated_at, suite) VALUES (?1, ?2, 'entered by a person', ?3, ?3, ?3, ?4)");
  insert.bind(1, api).bind(2, edit.kind.value_or("failing")).bind(3, now).bind(4, suite).run();
  // Each statement's WHERE ends "api = ?3": the suite is ?4.
  auto update = [&](const std::string& sql_text, const std::string& value) {
    sql::Statement u(db_, sql_text + " AND suite = ?4");
    u.bind(1, value).bind(2, now).bind(3, api).bind(4, suite).run();
  };
  if (edit.severity) {
    if (*edit.severity == "auto") {
      update("UPDATE gaps SET severity_by = 'auto', updated_at = ?2 WHERE ?1 = ?1 AND api = ?3",
             "");
    } else {
      update(
          "UPDATE gaps SET severity = ?1, severity_by = 'person', updated_at = ?2 WHERE api = ?3",
          *edit.severity);
    }
  }
  if (edit.status) {
    if (*edit.status == "auto") {
      update("UPDATE gaps SET status_by = 'auto', updated_at = ?2 WHERE ?1 = ?1 AND api = ?3", "");
    } else {
      update("UPDATE gaps SET status = ?1, status_by = 'person', updated_at = ?2 WHERE api = ?3",
             *edit.status);
    }
  }
  if (edit.kind) update("UPDATE gaps SET kind = ?1, updated_at = ?2 WHERE api = ?3", *edit.kind);
  // An action or equivalent set by hand is the person's; "auto" hands it back to the runs.
  for (const auto& [value, column] :
       {std::pair{&edit.action, "action"}, std::pair{&edit.equivalent, "equivalent"}}) {
    if (!*value) continue;
    if (**value == "auto") {
      update(fmt::format("UPDATE gaps SET {0}_by = 'auto', updated_at = ?2 WHERE ?1 = ?1 AND "
                         "api = ?3",
                         column),
             "");
    } else {
      update(fmt::format("UPDATE gaps SET {0} = ?1, {0}_by = 'person', updated_at = ?2 WHERE "
                         "api = ?3",
                         column),
             **value);
    }
  }
  if (edit.note) update("UPDATE gaps SET note = ?1, updated_at = ?2 WHERE api = ?3", *edit.note);
  tx.commit();
  refresh_severity(suite, api);
  return suite;
}

std::vector<GapEntry> GapLog::query(const std::string& where,
                                    const std::function<void(sql::Statement&)>& bind,
                                    bool with_tests, std::int64_t tests_run) {
  sql::Statement s(db_, fmt::format("SELECT {} FROM gaps g {}", kColumns, where));
  if (bind) bind(s);
  std::vector<GapEntry> out;
  while (s.step()) {
    GapEntry e;
    e.suite = s.text(0);
    e.api = s.text(1);
    e.kind = s.text(2);
    e.status = s.text(3);
    e.status_by_person = s.text(4) == "person";
    e.severity = s.text(5);
    e.severity_by_person = s.text(6) == "person";
    e.equivalent = s.text(7);
    e.action = s.text(8);
    e.note = s.text(9);
    e.why = s.text(10);
    e.first_seen_run = s.opt_int64(11).value_or(0);
    e.last_seen_run = s.opt_int64(12).value_or(0);
    e.fixed_in_run = s.opt_int64(13).value_or(0);
    e.first_seen_at = s.text(14);
    e.last_seen_at = s.text(15);
    e.updated_at = s.text(16);
    e.action_by_person = s.text(17) == "person";
    e.equivalent_by_person = s.text(18) == "person";
    e.setting = s.text(19);
    e.trial.setting = s.text(20);
    e.trial.run = s.opt_int64(21).value_or(0);
    e.trial.tests = static_cast<int>(s.opt_int64(22).value_or(0));
    e.trial.passed = static_cast<int>(s.opt_int64(23).value_or(0));
    e.tests = static_cast<int>(s.int64(24));
    e.files = static_cast<int>(s.int64(25));
    out.push_back(std::move(e));
  }
  if (with_tests) {
    // A run's own evidence (tests_run) leaves out the tests carried into it.
    sql::Statement t(db_, fmt::format("SELECT file, classname, name, carried_from FROM gap_tests "
                                      "WHERE api = ? AND suite = ? AND run_id = ? {} "
                                      "ORDER BY file, classname, name",
                                      tests_run > 0 ? "AND carried_from IS NULL" : ""));
    for (auto& e : out) {
      const std::int64_t run = tests_run > 0 ? tests_run : e.last_seen_run;
      t.bind(1, e.api).bind(2, e.suite).bind(3, run);
      while (t.step()) {
        e.test_list.push_back({t.text(0), t.text(1), t.text(2), t.opt_int64(3).value_or(0)});
      }
      t.reset();
      if (tests_run > 0) {
        e.tests = static_cast<int>(e.test_list.size());
        std::set<std::string> files;
        for (const auto& x : e.test_list) files.insert(x.file);
        e.files = static_cast<int>(files.size());
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const GapEntry& a, const GapEntry& b) {
    auto rank = [](const GapEntry& e) {
      return e.status == "open" ? 0 : e.status == "wontfix" ? 1 : 2;
    };
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (severity_rank(a.severity) != severity_rank(b.severity)) {
      return severity_rank(a.severity) < severity_rank(b.severity);
    }
    if (a.tests != b.tests) return a.tests > b.tests;
    return std::tie(a.api, a.suite) < std::tie(b.api, b.suite);
  });
  return out;
}

std::vector<GapEntry> GapLog::list(const std::optional<std::string>& suite) {
  if (!suite) return query("", nullptr, false, 0);
  return query(
      "WHERE g.suite = ?", [&](sql::Statement& s) { s.bind(1, *suite); }, false, 0);
}

std::optional<GapEntry> GapLog::entry(const std::string& api,
                                      const std::optional<std::string>& suite) {
  auto found = suite ? query(
                           "WHERE g.api = ? AND g.suite = ?",
                           [&](sql::Statement& s) { s.bind(1, api).bind(2, *suite); }, true, 0)
                     : query(
                           "WHERE g.api = ? ORDER BY coalesce(g.last_seen_run, 0) DESC LIMIT 1",
                           [&](sql::Statement& s) { s.bind(1, api); }, true, 0);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::vector<GapEntry> GapLog::entries(const std::string& api) {
  return query(
      "WHERE g.api = ?", [&](sql::Statement& s) { s.bind(1, api); }, true, 0);
}

std::vector<GapEntry> GapLog::for_run(std::int64_t run_id) {
  return query(
      "WHERE (g.suite, g.api) IN (SELECT suite, api FROM gap_tests WHERE run_id = ? AND "
      "carried_from IS NULL)",
      [&](sql::Statement& s) { s.bind(1, run_id); }, true, run_id);
}

}  // namespace devshim
