// Reading runs' statuses (Store::result_statuses) for build_report: a cache of the last runs
// read, for a caller that renders many runs, and the rows of each file.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "runner/results/store.h"

namespace devshim {

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

}  // namespace devshim
