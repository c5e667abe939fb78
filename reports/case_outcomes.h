// Every test of a run against another run (its baseline, its previous run), matched by file path
// and test id without reading any text of the tests (Store::result_statuses): what build_report
// counts for every test, whether or not it reads the test in full.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runner/results/store.h"

namespace devshim {

/// Another run's status of each test of a run, by the run's file index and test id.
class OtherStatuses {
 public:
  OtherStatuses() = default;  ///< no other run: every lookup is nullopt
  /// other's statuses of the tests of now (both read from the same store).
  OtherStatuses(const RunResultStatuses& now, const RunResultStatuses& other);

  /// The other run's status of row of now; nullopt when the other run has no such test in a file
  /// of that path.
  std::optional<CaseStatus> find(const RunResultStatuses::Row& row) const;

  /// The paths of the other run's files with at least one failing result.
  const std::set<std::string>& failing_files() const { return failing_files_; }

 private:
  std::unordered_map<std::uint64_t, CaseStatus> by_key_;
  std::set<std::string> failing_files_;
};

/// Store::result_statuses through a cache of the last runs read: a site renders each run after
/// the run that names it as its previous run, so each run's statuses are read once.
class StatusReader {
 public:
  explicit StatusReader(Store& store, std::size_t keep = 4) : store_(store), keep_(keep) {}
  std::shared_ptr<const RunResultStatuses> read(std::int64_t run_id);

 private:
  Store& store_;
  std::size_t keep_;
  std::deque<std::pair<std::int64_t, std::shared_ptr<const RunResultStatuses>>> last_;
};

/// now's rows of each file: rows [first[i], first[i + 1]) belong to now.files[i].
std::vector<std::size_t> file_row_starts(const RunResultStatuses& now);

/// The statuses of cases as Store::result_statuses would read them (cases in Store::cases'
/// order).
RunResultStatuses statuses_of(const std::vector<StoredCase>& cases);

}  // namespace devshim
