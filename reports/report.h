// The content every report shows, read from the results store: one model, four renderers
// (markdown.h, json_report.h, junit_xml.h, html.h). Nothing here knows about a format.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "parsers/test_result.h"
#include "reports/source_links.h"
#include "runner/results/cuda_branch.h"
#include "runner/results/differential.h"
#include "runner/results/file_error.h"
#include "runner/results/gap_log.h"
#include "runner/results/store.h"

namespace devshim {

class StatusReader;

struct ReportCase {
  TestCase test;
  std::string signature;  ///< empty unless the case failed
  SourceLinks links;
  std::string diff_class;  ///< differential runs: compatible, regression, ...; else empty
  std::string change;      ///< with a previous run: new_failure, fixed, ...; else empty
  /// With a previous run: the test's status there; nullopt when it was absent (or no run).
  std::optional<CaseStatus> previous_status;
  bool flaky = false;  ///< failed, then passed on a rerun (test.status: the passing outcome)
  std::vector<CaseAttempt> attempts;  ///< --rerun-failures: every attempt; else empty
  /// The test's page across runs, relative to the report's folder (`runner site` sets it for
  /// the tests it has a page of); empty: none.
  std::string test_page;
  bool cuda_path = false;   ///< shim runs: it took a CUDA path (ReportCudaPath)
  bool cuda_asked = false;  ///< shim runs: its only contact with CUDA was asking (ReportCudaPath)
};

/// The tests of a shim run that took a CUDA path (docs/report-format.md#the-cuda-path): the shim's
/// redirection record says they did device work (TestCase::cuda_contact: a request naming CUDA
/// carried to a placement while the test set up or ran), or, against a baseline, the baseline
/// skipped them and this run did not, or they are new under the shim (took_cuda_path); and, apart,
/// those that only asked (only_asked_cuda). The headline of a shim run (cuda_path_text).
struct ReportCudaPath {
  int tests = 0;
  int passed = 0;   ///< passed, xfailed, xpassed
  int failed = 0;   ///< failed, error
  int skipped = 0;  ///< skipped under the shim (a record names a test that skipped in its body)
  /// Of the failed, those that failed in the baseline too (broken_both: on the CPU without the
  /// shim); nullopt without a baseline.
  std::optional<int> failed_without_shim;
  /// By reason, each test counted under the first that holds: device work by the record, a
  /// failure in a CUDA-only branch of its source, run where the baseline skipped, new under the
  /// shim.
  int recorded = 0, in_branch = 0, unskipped = 0, new_tests = 0;
  /// Tests whose only contact with CUDA was asking (is_available, seeding, a stream): not among
  /// `tests`.
  int asked = 0;
};

/// The tests of a recorded shim run that took a CUDA path, as build_report finds them, without
/// a report: their counts and result ids (StoredCase::result_id), from the run's statuses (now)
/// and its baseline's aligned to them (aligned_statuses; null: the run has no baseline); and,
/// against a baseline, the result ids of its regressions and CUDA-branch failures (the classes
/// regression and cuda_branch_failed). Empty for a baseline run.
struct CudaPathOfRun {
  ReportCudaPath counts;
  std::unordered_set<std::int64_t> results;
  std::unordered_set<std::int64_t> regressions, cuda_branch_failures;
};
CudaPathOfRun cuda_path_of_run(Store& store, const RunRecord& run, const RunResultStatuses& now,
                               const RunResultStatuses* baseline);

/// "551 tests took a CUDA path under the shim (device work): 551 passed, 0 failed (0 of them fail
/// without the shim too), 0 skipped." (the parenthesis only against a baseline); "No test took a
/// CUDA path under the shim." when none did; either followed by " 330 more only asked (a query,
/// seeding, a stream)." when some only asked.
std::string cuda_path_text(const ReportCudaPath& c);

/// A shim run compared with its baseline (shim off) run, test by test
/// (docs/report-format.md#differential-runs): compatible (pass/pass), regression (pass → fail on
/// code that ran both ways), cuda_branch_failed and cuda_branch_passed (fail and pass after device
/// work on a CUDA path the baseline could not take: diff_class),
/// lost (reported by the baseline, missing from the shim run, in a file the shim run planned:
/// counted as a regression), unlocked (skip or fail → pass), broken_both (fail or skip → fail),
/// skipped_both (skip or fail → skip), newly_skipped (pass → skip), new_passed / new_failed /
/// new_skipped (not in the baseline, whose file ran to its end: RunStatuses::is_new). xfailed and
/// xpassed count as passes; another test missing from the baseline (its file stopped early or
/// reported no test there) counts as a failure there.
struct ReportDifferential {
  std::int64_t baseline_run = 0;
  /// The baseline run's report.md and report.html relative to this report's folder; empty when
  /// that file is not there (not written, or pruned).
  std::string baseline_md, baseline_html;
  std::map<std::string, int> counts;  ///< class → tests
  /// newly_skipped tests whose skip reason says they want no GPU (skip_wants_no_gpu): expected
  /// under the CUDA masquerade.
  int masquerade_skips = 0;
  /// Tests the baseline run passed in the files this run has (passed, xfailed, xpassed), whether
  /// or not each could be paired with one of this run's. 0: nothing was compared, so "no
  /// regression" says nothing.
  int baseline_passed = 0;
  /// Tests of class renumbered that fail under the shim.
  int renumbered_failing = 0;
  /// The baseline's interpreter saw CUDA (saw_cuda): it ran the CUDA branches itself, so no
  /// failure is a CUDA branch's (no cuda_branch_* class).
  bool baseline_saw_cuda = false;
  /// How many of the renumbered tests must be regressions (RunResultStatuses::
  /// renumbered_regressions): counted with the regressions, though no one test can be named.
  int renumbered_regressions = 0;
  /// One test of a listed class, in file order; message: the shim run's failure or skip reason
  /// (lost tests: why the shim run lacks it, missing_reason; status "absent").
  struct Test {
    std::string file, classname, name, baseline_status, status, message;
    SourceLinks links;
    /// The gap entry whose evidence the test is in this run (regressions, lost, newly_skipped,
    /// broken_both and CUDA-branch failures); empty when none is.
    std::string gap{};
    /// CUDA-branch failures: what the failure's text says (failure_kind), then its cause
    /// (cuda_branch_cause, once its gap entry is known).
    FailureKind failure{};
    CudaBranchCause cause{};
  };
  std::vector<Test> regressions;
  /// cuda_branch_failed: passed without the shim, fail on a CUDA path it took with it.
  std::vector<Test> cuda_branch_failures;
  std::vector<Test> lost;
  std::vector<Test> unlocked;
  std::vector<Test> newly_skipped;
  std::vector<Test> broken_both;
  std::vector<Test> new_failed;  ///< new under the shim, failing (baseline_status "absent")
};

/// The tests new under the shim (new_passed + new_failed + new_skipped).
int new_under_shim(const ReportDifferential& d);

/// counts[cls], 0 when absent.
int class_count(const std::map<std::string, int>& counts, const char* cls);

/// The regressions and lost tests counted by the gap entry that names each, most first (ties by
/// name); "" for the tests no entry names, last.
std::vector<std::pair<std::string, int>> regressions_by_gap(const ReportDifferential& d);

/// Every regression: the listed ones, the lost tests and the renumbered ones that must be
/// regressions. What the closing line, runs.summary and --fail-on regressions count.
int regressions_total(const ReportDifferential& d);

/// The CUDA-branch failures counted by cause, in cuda_branch_causes()' order, causes with none
/// left out.
std::vector<std::pair<CudaBranchCause, int>> cuda_branch_failures_by_cause(
    const ReportDifferential& d);

/// A run compared with the previous comparable run (runs.previous_run: same suite, targets,
/// mode and shard), test by test, matched by file, class name and test name:
/// new_failure (fails now; passed, skipped or was absent before), fixed (failed before, does not
/// fail now), still_failing, unchanged (did not fail either time), flaky (failed, then passed
/// on a rerun: neither a new failure nor a fix), lost (in the previous run, missing now from a file
/// that stopped before its end: counted with the new failures), missing_before (missing from the
/// previous run, whose file stopped before its end there: not compared). Failed and error are
/// failures. A file that failed without any test result counts as one test named "(file)".
struct ReportPrevious {
  std::int64_t previous_run = 0;
  /// The other run was chosen with `runner report --against`, not recorded as the run's previous
  /// run: any recorded run, of any suite, mode or policy.
  bool against = false;
  std::string started_at;                  ///< the previous run's
  std::string previous_md, previous_html;  ///< its reports, as ReportDifferential::baseline_md
  std::map<std::string, int> counts;       ///< class → tests
  /// newly_skipped tests whose skip reason says they want no GPU (skip_wants_no_gpu): expected
  /// under the CUDA masquerade.
  int masquerade_skips = 0;
  struct Change {
    std::string file, classname, name, previous_status, status, message;
    SourceLinks links;
  };
  std::vector<Change> new_failures;
  std::vector<Change> fixed;
  std::vector<Change> lost;            ///< status "absent"; message: missing_reason
  std::vector<Change> missing_before;  ///< previous_status "absent"
};

/// A run without a previous run because every earlier run of its suite, targets, mode and policy
/// had other torch or shim versions (Store::comparable_run): the newest of those, which
/// `runner report --against` can compare with.
struct ReportOtherVersions {
  std::int64_t run = 0;
  std::string started_at;
  RunVersions versions;  ///< that run's
  RunVersions own;       ///< this run's
};

/// A later run that names this run as its previous run or as its baseline (Store::runs_naming):
/// what a report links forward to.
struct ReportLaterRun {
  std::int64_t run = 0;
  std::string started_at;
  std::string relation;  ///< "previous": compared with this run; "baseline": its shim run
  std::string md, html;  ///< its reports, as ReportDifferential::baseline_md
};

/// The run-to-run classes in the order reports list them, each with its meaning.
const std::vector<std::pair<std::string, std::string>>& change_classes();

/// The class of one test from its status in the previous run (nullopt: absent) and now.
/// previous_stopped: absent from the previous run, whose file stopped before its end there
/// (missing_before).
std::string change_class(std::optional<CaseStatus> previous, CaseStatus current, bool flaky = false,
                         bool previous_stopped = false);

/// A flaky test of the run: its attempts in order (Store::attempts).
struct ReportFlaky {
  std::string file, classname, name;
  std::vector<CaseAttempt> attempts;
  SourceLinks links;
};

struct ReportFile {
  FileRecord file;                    ///< status empty: the file never ran (not_run)
  std::string status;                 ///< to_string(status) or "not_run"
  std::string log_link;               ///< relative to the report's folder; empty if no log
  std::map<std::string, int> counts;  ///< test status → count
  std::vector<ReportCase> cases;
  /// It ended failing without reporting a test (file_error): what stopped it.
  std::optional<FileError> error;
  int lost = 0;  ///< differential runs: tests of the baseline lost in this file
};

/// Failures that share a signature (parsers/signature.h), biggest first.
struct ReportCluster {
  std::string signature;
  std::string exception;
  std::string message;          ///< normalised
  std::string example_message;  ///< one real message
  std::string example_traceback;
  struct Test {
    std::string file, classname, name;
    SourceLinks links;
  };
  std::vector<Test> tests;
};

/// Device requests the shim rewrote during the run, one per (shim, api, requested, used), most
/// frequent first (Store::redirections).
struct ReportRedirection {
  std::string shim, api, requested, used;
  long long count = 0;
  int files = 0;
  int sites = 0;
  SourceLocation first_site;  ///< path relative to the project when inside it
  std::string first_function;
  SourceLinks links;
};

struct ReportSummary {
  std::map<std::string, int> files;  ///< file status → count (incl. "not_run")
  std::map<std::string, int> tests;  ///< test status → count
  int files_total = 0;
  int tests_total = 0;
  /// passed / (all tests but skipped and xfailed), in [0, 1]; 0 when nothing counts.
  double pass_rate = 0;
};

struct Report {
  RunRecord run;
  nlohmann::json environment;  ///< RunRecord::environment parsed (an object, maybe empty)
  double duration_s = 0;       ///< finished_at - started_at; 0 while running
  ReportSummary summary;
  std::vector<ReportFile> files;  ///< failing first (by status), then by path
  std::vector<ReportCluster> clusters;
  std::optional<ReportDifferential> differential;  ///< set when the run has a baseline run
  std::optional<ReportPrevious> previous;          ///< set when the run has a previous run
  std::optional<ReportCudaPath> cuda_path;         ///< set for shim runs
  /// Set when it has none only because the versions differ (ReportOtherVersions).
  std::optional<ReportOtherVersions> other_versions;
  std::vector<ReportLaterRun> later_runs;  ///< runs naming this one, oldest first
  std::vector<ReportFlaky> flaky;          ///< tests that passed on a rerun
  std::vector<ReportRedirection> redirections;
  /// Entries of the API gap log with evidence in this run (runner/results/gap_log.h), most affected
  /// tests first; test_list holds this run's affected tests. Shim gaps only: the entries of kind
  /// environment (the same failure without the shim) are environment_entries.
  std::vector<GapEntry> gaps;
  std::vector<GapEntry> environment_entries;
  /// Why the report has no upstream links though the suite names a source_url
  /// (missing_links_note); empty when it has them or none were asked for.
  std::string link_note;
};

/// Which tests build_report reads in full into ReportFile::cases. Every count of the report
/// (summary, files, differential and run-to-run classes) covers every test either way.
enum class ReportCases {
  kAll,  ///< every test: what report.json and junit.xml list
  /// Only those report.md and report.html show one by one: failing, with a culprit or a failure
  /// signature, flaky, in a file with reruns, unlocked or newly skipped (differential), fixed
  /// (run to run). A year of nights renders in seconds (`runner site`).
  kShown,
};

/// Reads run run_id from store and computes links relative to report_dir (the folder the
/// reports are written to). against > 0: the run-to-run section compares with that run instead
/// of the run's previous run (ReportPrevious::against). Throws UsageError when a run does not
/// exist.
/// statuses: where to read runs' statuses (Store::result_statuses) when a caller renders many
/// runs (reports/case_outcomes.h); null: from store.
Report build_report(Store& store, std::int64_t run_id, const std::filesystem::path& report_dir,
                    std::int64_t against = 0, ReportCases cases = ReportCases::kAll,
                    StatusReader* statuses = nullptr);

/// Links from report_dir to report.md and report.html in run run_id's output folder: {md, html},
/// each empty when the run or that file is not there.
std::pair<std::string, std::string> other_report_links(Store& store, std::int64_t run_id,
                                                       const std::filesystem::path& report_dir);

/// What lists and trends of runs show of a run, from its report, stored as runs.summary
/// (docs/database.md): {"tests", "by_status", "pass_rate", "duration_s", "files",
/// "files_failing", "file_errors", "flaky", "gaps", "previous_run", "new_failures" (lost since
/// the previous run included), "fixed", "baseline_run", "regressions" (lost tests included),
/// "cuda_branch_failures", "cuda_branch_passed", "lost", "unlocked", "newly_skipped",
/// "cuda_path_tests", "cuda_path_passed", "cuda_path_asked"}; the comparisons' are null when the
/// run has no previous or baseline run.
nlohmann::json run_summary(const Report& report);

/// build_report, then its run_summary stored as the run's runs.summary: what every writer of a
/// run's reports calls.
Report build_and_store_report(Store& store, std::int64_t run_id,
                              const std::filesystem::path& report_dir);

/// Fills in what build_report says about the run against another run and its reruns, from the
/// cases it read (each with its change set when report.previous is, and every count already
/// made): report.previous's new failures and fixes, each case's attempts (the run's attempts),
/// report.flaky, and the classes of files that failed without a failing test (previous_files:
/// the other run's files; previous_failing: those of them with a failing test)
/// (reports/run_to_run.cpp).
void add_run_to_run(Report& report, std::vector<CaseAttempt> attempts,
                    const std::vector<FileRecord>& previous_files,
                    const std::set<std::string>& previous_failing);

/// The link base of a run's source locations for a report written to report_dir: its project,
/// its git checkout (from its environment's "git_toplevel"), source_url and commit.
LinkBase run_link_base(const RunRecord& run, const std::filesystem::path& report_dir);

}  // namespace devshim
