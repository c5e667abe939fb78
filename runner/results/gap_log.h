// The API gap log (docs/gaps.md): torch APIs the shim does not carry well yet, kept in the results
// database across runs. Entries come from failures under the shim (update_from_run), from
// comparing torch's CUDA surface with what the shim declares it carries (apply_scan), and from
// people (set); fields a person set are never overwritten by later runs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "parsers/gap_attribution.h"
#include "parsers/test_result.h"
#include "runner/results/store.h"

namespace devshim {

struct GapTest {
  std::string file, classname, name;
  /// 0: the run the entry was read for showed it; else the run that last did, carried into a
  /// later run of other targets that did not run the test (GapLog::update_from_run).
  std::int64_t carried_from = 0;
};

/// The test a file error entry names for a file that lost no test of the baseline (no baseline,
/// or the baseline failed there too): the file itself.
inline constexpr const char* kGapFileTest = "(file)";

/// A run of the affected tests with the setting an entry's action names (`--try-settings`).
struct GapTrial {
  std::string setting;   ///< "VARIABLE=value"; empty: never tried
  std::int64_t run = 0;  ///< the shim run whose tests were tried; 0: pruned or never
  int tests = 0;         ///< affected tests the trial ran
  int passed = 0;        ///< of them, how many passed (passed, xfailed, xpassed)
};

struct GapEntry {
  /// The suite whose runs showed it: each suite has entries of its own, so that one suite's run
  /// never changes another's; empty for torch's surface (apply_scan) and a person's entry of no
  /// suite.
  std::string suite;
  std::string api;
  std::string kind;    ///< failing, unpatched, unsupported_op, cuda_only, unattributed,
                       ///< newly_skipped, masquerade_skip, file_error, environment
  std::string status;  ///< open, fixed, wontfix
  bool status_by_person = false;
  std::string severity;  ///< critical, high, medium, low
  bool severity_by_person = false;
  /// What to do (gap_actions.h): written by each run unless a person set it (action_by_person),
  /// the equivalent on the device used likewise; note: people's.
  std::string equivalent, action, note;
  bool action_by_person = false;
  bool equivalent_by_person = false;
  /// The documented shim setting ("VARIABLE=value") that may fix the entry, from the latest run;
  /// empty when none does.
  std::string setting;
  GapTrial trial;   ///< the latest trial of a setting
  std::string why;  ///< how the latest evidence was attributed
  std::int64_t first_seen_run = 0, last_seen_run = 0, fixed_in_run = 0;  ///< 0: none
  std::string first_seen_at, last_seen_at, updated_at;
  int tests = 0;                   ///< affected tests as of last_seen_run (carried ones included)
  int files = 0;                   ///< their files
  std::vector<GapTest> test_list;  ///< filled by GapLog::entry and GapLog::for_run
};

/// "TORCHDEVICE_DEVICE_OBJECTS=redirect: 37 of 45 pass (run 12)"; empty when never tried.
std::string gap_trial_text(const GapTrial& trial);
/// {"setting", "run", "tests", "passed"}, or null when never tried (report.json, gaps export).
nlohmann::json gap_trial_json(const GapTrial& trial);

/// A file error entry's files and how many tests of the baseline each lost (0 for a file named
/// by kGapFileTest alone), from its test_list; empty for other kinds.
std::map<std::string, int> lost_by_file(const GapEntry& entry);

/// What a person may set (`runner gaps set`); unset fields stay as they are. "auto" for action or
/// equivalent hands it back to the runs.
struct GapEdit {
  std::optional<std::string> severity, status, action, note, equivalent, kind;
  /// The entry's suite; unset: the one suite that has an entry of that API (none: "", an entry
  /// of no suite), refused when several do.
  std::optional<std::string> suite;
};

/// The gap-log entry one test of a shim run is evidence of, or nullopt (it passed, or skipped
/// without a baseline saying it passed there). A failure: the API attribute_failure names, else
/// "unattributed <Exception>: <normalized first line of the message>" (kind unattributed). A
/// test that passed in the baseline and skips (`has_baseline`, `baseline` its status there):
/// "newly skipped: <reason>", kind masquerade_skip when the reason says the test wants no GPU
/// (skip_wants_no_gpu), else newly_skipped. (A file's import or collection error, and the tests it
/// lost, are update_from_run's: file error entries.)
/// failing_statement: attribute_failure's (the whole statement the log printed the first line
/// of), read by the caller from the test's source (statement_in_source). cuda_branch: where the
/// failing code's branch asks for CUDA ("path:line", cuda_branch_in_source), kRecordedCudaBranch,
/// or empty; an unattributed failure there is "unattributed <Exception> in a CUDA-only branch:
/// <message>" (code the run without the shim never ran, whatever it did there), or, by its text,
/// kOwnErrorInCudaBranch's or kNumericInCudaBranch's entry.
std::optional<GapAttribution> attribute_case(const TestCase& test, bool has_baseline,
                                             std::optional<CaseStatus> baseline,
                                             std::string_view failing_statement = {},
                                             std::string_view cuda_branch = {});

/// What an unattributed failure's entry says after its exception when the failing code runs
/// only where CUDA is there (attribute_case's cuda_branch).
inline constexpr std::string_view kInCudaBranch = " in a CUDA-only branch";
/// The entry of such a failure whose error the test's own code raises on any device
/// (is_own_error, runner/results/cuda_branch.h): "<this>: <Exception>: <message>".
inline constexpr std::string_view kOwnErrorInCudaBranch = "test's own error in a CUDA-only branch";
/// The entry of such a failure that is a numeric difference (is_numeric_difference):
/// "<this>: <message>".
inline constexpr std::string_view kNumericInCudaBranch = "numeric difference in a CUDA-only branch";
/// attribute_case's cuda_branch for a test the shim's record says did device work on a CUDA path
/// that its baseline, which saw no CUDA, passed without (a CUDA-branch failure), where no
/// condition was found in its source.
inline constexpr std::string_view kRecordedCudaBranch = "(the shim's record)";

/// Where a failing test's code runs only where CUDA is there: "path:line" (the path as the log
/// printed it) of the condition (cuda_branch_at) around the innermost frame outside torch and
/// the shim that has one, read from the frames' files (relative paths: to project_root); empty
/// when none. `sources` caches each file read, as statement_in_source's.
std::string cuda_branch_in_source(const TestCase& test, const std::filesystem::path& project_root,
                                  std::map<std::string, std::string>& sources);

/// Sets TestCase::fails_in_cuda_branch on each failing case (of one file, from one shim run) whose
/// failure cuda_branch_in_source places in a branch that runs only where CUDA is there. Returns
/// how many it set.
int mark_cuda_branch_failures(std::vector<TestCase>& cases,
                              const std::filesystem::path& project_root);

/// The whole failing statement of a failing test whose log printed only its first line
/// (frame_of_cut_statement), read from the frame's file (relative paths: to project_root), or
/// empty. `sources` caches each file read (an unreadable one: empty).
std::string statement_in_source(const TestCase& test, const std::filesystem::path& project_root,
                                std::map<std::string, std::string>& sources);

/// The severity computed from impact when no person set one: critical ≥ 20 tests or ≥ 5 files,
/// high ≥ 5 tests, medium ≥ 2 tests, else low. (An unpatched entry without tests, a
/// masquerade_skip entry and the tests' own, gap_tests_own, are low whatever their impact; an
/// entry beyond the shim, GapAction::beyond_the_shim, is at most medium.)
std::string computed_severity(int tests, int files);

class GapLog {
 public:
  explicit GapLog(Store& store) : store_(store), db_(store.database()) {}

  /// Attributes run_id's tests with attribute_case and updates the log: every failing test
  /// (with a baseline: regressions and broken_both alike, except a test whose failure has the
  /// signature its baseline result has: the shim changed nothing there) and, with a baseline,
  /// every newly
  /// skipped one is evidence of one entry. A file that reported no test (file_error) is an entry
  /// of kind file_error, "file error: <Exception>: <message>", whose evidence is the tests of the
  /// baseline it lost (or the file itself, kGapFileTest, when it lost none), its import error's
  /// result not attributed apart; lost tests of other files are evidence of "lost: <why>". Each
  /// entry seen gets its action, equivalent and setting (gap_action, for the run's shim
  /// settings), the action and equivalent only where no person set them. An API seen again is
  /// reopened (unless a person set its status); an open entry last seen in a run of the same
  /// suite and targets and absent from this one is marked fixed. When the run that last saw an
  /// entry had other targets (a re-run of a few tests, a -k selection), the tests of that run's
  /// evidence that this run did not run stay the entry's tests (carried_from): a test stops
  /// counting only when a run that ran it shows it not to be affected. Baseline runs and
  /// interrupted runs change nothing. Returns the number of APIs seen in this run.
  int update_from_run(std::int64_t run_id);

  /// Records a trial of setting on the tests of run_id of suite's entry api: tried, passed.
  void record_trial(const std::string& suite, const std::string& api, std::int64_t run_id,
                    const std::string& setting, int tests, int passed);

  /// `runner gaps scan`: surface = public torch CUDA APIs, carried = what the shim declares it
  /// carries. Uncarried APIs become `unpatched` entries; unpatched entries now carried are fixed.
  /// Returns {new entries, entries marked fixed}.
  std::pair<int, int> apply_scan(const std::vector<std::string>& surface,
                                 const std::vector<std::string>& carried);

  /// Sets fields by hand (creating the entry, kind failing unless given, when it is new). Throws
  /// UsageError for values outside the vocabulary, and when edit.suite is unset and several
  /// suites have an entry of api. Returns the entry's suite (suite_of).
  std::string set(const std::string& api, const GapEdit& edit);

  /// Every entry (of one suite when given), biggest impact first (open before fixed, then
  /// severity, then tests).
  std::vector<GapEntry> list(const std::optional<std::string>& suite = std::nullopt);
  /// The entry of api of suite, with its tests; unset suite: of the suite that saw it last.
  std::optional<GapEntry> entry(const std::string& api,
                                const std::optional<std::string>& suite = std::nullopt);
  /// The entries of api, one per suite that has one, with their tests, biggest impact first.
  std::vector<GapEntry> entries(const std::string& api);
  /// The suite `gaps set` means: suite when given; else the one suite with an entry of api ("" when
  /// none has). Throws UsageError naming them when several have.
  std::string suite_of(const std::string& api, const std::optional<std::string>& suite);
  /// Entries with evidence in run_id, with the tests the run showed (none carried), most affected
  /// tests first.
  std::vector<GapEntry> for_run(std::int64_t run_id);

 private:
  void refresh_severity(const std::string& suite, const std::string& api);
  /// Entries matching `where` (bound by bind); with_tests fills test_list from tests_run, or
  /// from each entry's last_seen_run when tests_run is 0.
  std::vector<GapEntry> query(const std::string& where,
                              const std::function<void(sql::Statement&)>& bind, bool with_tests,
                              std::int64_t tests_run);

  Store& store_;
  sql::Database& db_;
};

}  // namespace devshim
