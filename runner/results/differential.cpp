#include "runner/results/differential.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace devshim {

const std::vector<std::pair<std::string, std::string>>& differential_classes() {
  static const std::vector<std::pair<std::string, std::string>> classes{
      {"regression", "passed without the shim, fails with it"},
      {"unlocked", "skipped or failed without the shim, passes with it"},
      {"compatible", "passes both ways"},
      {"broken_both", "fails with the shim, did not pass without it"},
      {"newly_skipped", "passed without the shim, skipped with it"},
      {"skipped_both", "skipped with the shim, did not pass without it"}};
  return classes;
}

std::string diff_class(std::optional<CaseStatus> baseline, CaseStatus shim) {
  enum Outcome { kPass, kFail, kSkip };
  auto outcome = [](CaseStatus s) {
    switch (s) {
      case CaseStatus::kFailed:
      case CaseStatus::kError:
        return kFail;
      case CaseStatus::kSkipped:
        return kSkip;
      default:
        return kPass;
    }
  };
  const Outcome before = baseline ? outcome(*baseline) : kFail;
  const Outcome after = outcome(shim);
  if (after == kPass) return before == kPass ? "compatible" : "unlocked";
  if (after == kFail) return before == kPass ? "regression" : "broken_both";
  return before == kPass ? "newly_skipped" : "skipped_both";
}

bool skip_wants_no_gpu(std::string_view reason) {
  std::string text(reason);
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // The phrases test suites use for "skip when a GPU is there" (accelerate's require_cpu,
  // unittest skipIf(torch.cuda.is_available(), ...) reasons seen in the wild).
  static constexpr std::array<std::string_view, 10> kPhrases = {
      "requires only a cpu", "only a cpu",       "cpu only",        "cpu-only",
      "only on cpu",         "only runs on cpu", "requires no gpu", "without a gpu",
      "cuda is available",   "gpu is available"};
  return std::any_of(kPhrases.begin(), kPhrases.end(),
                     [&](std::string_view p) { return text.find(p) != std::string::npos; });
}

namespace {

// A test id and a file index in one key: test ids (SQLite rowids of tests) stay below 2^40.
std::uint64_t key_of(std::uint32_t file, std::int64_t test_id) {
  return (static_cast<std::uint64_t>(file) << 40U) ^ static_cast<std::uint64_t>(test_id);
}

}  // namespace

RunStatuses::RunStatuses(const RunResultStatuses& now, const RunResultStatuses& other) {
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

std::optional<CaseStatus> RunStatuses::find(const RunResultStatuses::Row& row) const {
  auto it = by_key_.find(key_of(row.file, row.test_id));
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
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
