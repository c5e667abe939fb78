#include "reports/case_outcomes.h"

#include <algorithm>

namespace devshim {

std::shared_ptr<const RunResultStatuses> StatusReader::read(std::int64_t run_id) {
  for (const auto& [id, statuses] : last_) {
    if (id == run_id) return statuses;
  }
  auto statuses = std::make_shared<const RunResultStatuses>(store_.result_statuses(run_id));
  last_.emplace_back(run_id, statuses);
  if (last_.size() > keep_) last_.pop_front();
  return statuses;
}

std::vector<std::size_t> file_row_starts(const RunResultStatuses& now) {
  std::vector<std::size_t> first(now.files.size() + 1, now.rows.size());
  for (std::size_t i = now.rows.size(); i-- > 0;) first[now.rows[i].file] = i;
  // A file index is never without rows, so each start is set; keep them ordered regardless.
  for (std::size_t i = now.files.size(); i-- > 0;) first[i] = std::min(first[i], first[i + 1]);
  return first;
}

}  // namespace devshim
