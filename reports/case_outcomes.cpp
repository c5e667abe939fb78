#include "reports/case_outcomes.h"

#include <algorithm>

namespace devshim {

namespace {

// A test id and a file index in one key: test ids (SQLite rowids of tests) stay below 2^40.
std::uint64_t key_of(std::uint32_t file, std::int64_t test_id) {
  return (static_cast<std::uint64_t>(file) << 40U) ^ static_cast<std::uint64_t>(test_id);
}

}  // namespace

OtherStatuses::OtherStatuses(const RunResultStatuses& now, const RunResultStatuses& other) {
  // The other run's file index -> now's (both lists sorted; absent from now: not needed).
  std::vector<std::optional<std::uint32_t>> to_now(other.files.size());
  for (std::size_t i = 0; i < other.files.size(); ++i) {
    auto it = std::lower_bound(now.files.begin(), now.files.end(), other.files[i]);
    if (it != now.files.end() && *it == other.files[i]) {
      to_now[i] = static_cast<std::uint32_t>(it - now.files.begin());
    }
  }
  by_key_.reserve(other.rows.size());
  for (const auto& row : other.rows) {
    if (is_failure(row.status)) failing_files_.insert(other.files[row.file]);
    if (const auto file = to_now[row.file]) by_key_[key_of(*file, row.test_id)] = row.status;
  }
}

std::optional<CaseStatus> OtherStatuses::find(const RunResultStatuses::Row& row) const {
  auto it = by_key_.find(key_of(row.file, row.test_id));
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

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

RunResultStatuses statuses_of(const std::vector<StoredCase>& cases) {
  RunResultStatuses out;
  out.rows.reserve(cases.size());
  for (const StoredCase& c : cases) {
    if (out.files.empty() || out.files.back() != c.file) out.files.push_back(c.file);
    out.rows.push_back({.result_id = c.result_id,
                        .test_id = c.test_id,
                        .file = static_cast<std::uint32_t>(out.files.size() - 1),
                        .status = c.test.status,
                        .flaky = c.flaky,
                        .culprit = !c.test.culprit.empty(),
                        .signature = !c.signature.empty()});
  }
  return out;
}

}  // namespace devshim
