// The differential classes (docs/report-format.md#differential-runs): a shim run compared with its
// baseline (shim off) run, test by test. Used by the reports (counts, regressions) and by the gap
// log (newly skipped tests), so it lives below both.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "parsers/test_result.h"
#include "runner/results/store.h"

namespace devshim {

/// The differential classes in the order reports list them, each with its meaning:
/// compatible (pass/pass), regression (pass → fail on code that ran both ways), cuda_branch_failed
/// (pass → fail, with device work on a CUDA path the baseline could not take), cuda_branch_passed
/// (pass/pass, with such device work), lost (reported by the baseline, missing
/// from the shim run: its file failed to import or collect, crashed or timed out before it),
/// unlocked (skip or fail → pass), broken_both (fail or skip → fail), skipped_both (skip or
/// fail → skip), newly_skipped (pass → skip), new_passed / new_failed / new_skipped (new under
/// the shim: a test the baseline did not have in a file it ran to its end, such as a case a
/// device list gains where CUDA is "available": RunStatuses::is_new), renumbered (a
/// parameterized case the shim run numbers otherwise, with no one baseline case to compare with:
/// renumbering_aligned).
const std::vector<std::pair<std::string, std::string>>& differential_classes();

/// The class of a test new under the shim by its status: new_passed, new_failed, new_skipped.
std::string new_class(CaseStatus shim);

/// Whether a test of a shim run ran a branch of its own for CUDA: the shim's record says it did
/// device work (TestCase::cuda_contact), or it fails in code that runs only where CUDA is there
/// (TestCase::fails_in_cuda_branch).
bool ran_cuda_branch(const TestCase& test);
bool ran_cuda_branch(const RunResultStatuses::Row& row);

/// Whether a test of a shim run took a CUDA path (docs/report-format.md#the-cuda-path): it ran a
/// CUDA branch (ran_cuda_branch), or its baseline skipped it and the shim run did not
/// (`baseline`: its status there), or it is new under the shim (RunStatuses::is_new).
bool took_cuda_path(const RunResultStatuses::Row& row, std::optional<CaseStatus> baseline,
                    bool is_new);

/// Whether a test of a shim run only asked: the record says its one contact with CUDA was asking
/// (a query, seeding, a stream) and it took no CUDA path (took_cuda_path). Counted apart.
bool only_asked_cuda(const RunResultStatuses::Row& row, std::optional<CaseStatus> baseline,
                     bool is_new);

/// Whether a run's interpreter saw CUDA hardware (its environment's "cuda_available", which the
/// probe reports for the hardware, not the masquerade). A baseline that saw CUDA ran the CUDA
/// branches itself: against it no failure is a CUDA branch's (diff_class).
bool saw_cuda(const nlohmann::json& environment);

/// Whether tests of a differential class count as regressions (`--fail-on regressions`, the
/// reports' and `runner runs`' regression counts): regression and lost.
bool counts_as_regression(std::string_view diff_class);

/// Whether a status counts as a pass in a differential: passed, xfailed and xpassed.
bool is_differential_pass(CaseStatus s);

/// The class of one test from its status in the baseline run (nullopt: absent, which counts as a
/// failure there) and under the shim. xfailed and xpassed count as passes. cuda_branch: under the
/// shim the test did device work on a CUDA path that its baseline could not take (it saw no
/// CUDA): passed → failed is then cuda_branch_failed, not a regression, and passed → passed
/// cuda_branch_passed, not compatible.
std::string diff_class(std::optional<CaseStatus> baseline, CaseStatus shim,
                       bool cuda_branch = false);

/// Whether a skip's reason says the test runs only where there is no GPU (accelerate's
/// `@require_cpu`: "test requires only a CPU"; "CPU only", "no GPU", "CUDA is available", ...).
/// Such a test skips under the shim because the CUDA masquerade says a GPU is there: an expected
/// effect of the masquerade, not a test the shim lost. Case-insensitive.
bool skip_wants_no_gpu(std::string_view reason);

/// Another run's status of each test of a run (a differential run's baseline, the run it is
/// compared with), matched by file path and test id (StoredCase::test_id: its class name and
/// test name) without reading any text of the tests (Store::result_statuses).
class RunStatuses {
 public:
  RunStatuses() = default;  ///< no other run: every lookup is nullopt
  /// other's statuses of the tests of now (both read from the same store). complete_files: the
  /// paths of other's files that ran to their end (FileRecord status passed or failed), where a
  /// test of now that other lacks is new (is_new); elsewhere it counts as failed in other.
  RunStatuses(const RunResultStatuses& now, const RunResultStatuses& other,
              const std::set<std::string>& complete_files = {});

  /// The other run's status of row of now; nullopt when the other run has no such test in a file
  /// of that path.
  std::optional<CaseStatus> find(const RunResultStatuses::Row& row) const;

  /// Whether row of now is a case the other run numbered otherwise, with no one counterpart there
  /// (RunResultStatuses::renumbered): its class is "renumbered", not compared.
  bool renumbered(const RunResultStatuses::Row& row) const;

  /// Whether row of now is a test other did not have in a file other ran to its end (given to
  /// the constructor), and not renumbered: new under the shim.
  bool is_new(const RunResultStatuses::Row& row) const;

  /// row's differential class: renumbered, a new class (is_new), else diff_class, whose
  /// cuda_branch is ran_cuda_branch(row) where cuda_branches (the other run saw no CUDA:
  /// !saw_cuda).
  std::string diff_class_of(const RunResultStatuses::Row& row, bool cuda_branches = true) const;

  /// The paths of the other run's files with at least one failing result.
  const std::set<std::string>& failing_files() const { return failing_files_; }

 private:
  std::unordered_map<std::uint64_t, CaseStatus> by_key_;
  std::unordered_set<std::uint64_t> renumbered_;
  std::set<std::string> failing_files_;
  std::vector<bool> complete_;  // by now's file index: other ran that file to its end
};

/// A test name without its case indexes. unittest `parameterized.expand`'s: the first
/// "_<digits>" followed by "_" or the end (`test_fit_08_sum_cuda` → `test_fit_#_sum_cuda`,
/// `test_fit_3` → `test_fit_#`). pytest's, in the id between "[" and "]": each "-"-separated part
/// that is an identifier ending in a number below `cases` (the test's number of cases; no leading
/// zero), which is how pytest names a value it does not print (a torch.device, an object:
/// argument name and index in the parameter list, `device1`), so `test_x[td-device3]` →
/// `test_x[td-device#]` with 4 cases or more; `[float32]` of a test with fewer than 33 cases,
/// `[cuda-0]` and `[3]` are values, kept. Empty when the name has no index.
std::string without_case_index(std::string_view name, std::size_t cases = 0);

/// The names a pytest case may have had before pytest made one of its parametrize ids unique,
/// each with the occurrence pytest numbered it: where the ids of a parametrize's values collide
/// (two values that print alike: the CPU's device and `torch.device("cuda")` built as the CPU's),
/// pytest appends each one's occurrence to it, `test_x[cpu]` → `test_x[cpu0]`, `test_x[cpu1]`,
/// with "_" after an id that ends in a digit (`[n-1]` → `[n-1_0]`), before the ids of stacked
/// parametrizes are joined with "-" (`[cpu0-sum]`). One candidate per number that ends an id
/// part (at a "-" or the "]"), a number alone or after "=" being a value (`[3]`, `[a-3]`,
/// `[n=3]`); none for `[cpu]`.
std::vector<std::pair<std::string, std::size_t>> pytest_unique_id_origins(std::string_view name);

/// `other` (a baseline) aligned to `now` where cases were renumbered: `parameterized.expand`
/// numbers a test's cases in order, and pytest the values it names by index, so a case list that
/// grows under the shim (a "cuda" case added where CUDA is available) gives other numbers to the
/// cases after it. In the files where a test of one run is missing from the other (missing_rows),
/// the tests are grouped by file, class and name without the case index (without_case_index). A
/// group with as many tests on each side holds the same cases in the same order: the rows of
/// `other` take `now`'s test ids, so that every matching by test id (RunStatuses, missing_rows)
/// pairs them. A group whose sizes differ cannot be paired (a name the same on both sides may be
/// another case): its rows of `now` go to `renumbered` and its rows of `other` are removed (not
/// lost), and the regressions its counts prove are counted (`renumbered_regressions`). A pytest
/// test (`name[...]`) with as many cases in both runs is one such group instead, of the cases
/// each side has and the other lacks, when `other` ran one of them: their values changed one for
/// one (parameters drawn at random when pytest collects, a value naming the device), and a value
/// pytest names by index in one run may be one it prints in the other. A pytest case that `other`
/// skipped and `now` lacks, where `now` has cases of the same test, was replaced by the
/// masquerade (`[NOTSET]`, a value naming the device): removed, not lost. A case of one run whose
/// id the other run has only made unique by pytest (pytest_unique_id_origins: at least its
/// occurrences 0 and 1) is one group with those cases, whose counts decide.
/// nullopt when no file has a test missing from either run: `other` is aligned as it is. Reads the
/// names of those files' tests only (Store::test_names).
std::optional<RunResultStatuses> renumbering_aligned(Store& store, const RunResultStatuses& now,
                                                     const RunResultStatuses& other);

/// Store::result_statuses(other_run), aligned to now (renumbering_aligned).
RunResultStatuses aligned_statuses(Store& store, const RunResultStatuses& now,
                                   std::int64_t other_run);

/// The tests `other` reports that `now` does not, in the files of `in_files` (sorted paths): their
/// rows of other, in other's order. Matched as RunStatuses matches them (file path and test id).
/// A differential run's lost tests (other: its baseline; in_files: the files the shim run
/// planned), and a run's tests lost since its previous run (in_files: its files that stopped
/// before their end).
std::vector<RunResultStatuses::Row> missing_rows(const RunResultStatuses& now,
                                                 const RunResultStatuses& other,
                                                 const std::vector<std::string>& in_files);

/// The lost tests of a shim run: its baseline's tests (as the baseline recorded them) that the run
/// does not report, in the files the run planned (missing_rows), in the baseline's order; from
/// the run's statuses, its baseline's aligned to them (aligned_statuses) and the files the run
/// planned.
std::vector<StoredCase> lost_cases(Store& store, const RunResultStatuses& now,
                                   const RunResultStatuses& baseline,
                                   const std::vector<FileRecord>& planned);

/// The statuses of cases as Store::result_statuses would read them (cases in Store::cases'
/// order).
RunResultStatuses statuses_of(const std::vector<StoredCase>& cases);

}  // namespace devshim
