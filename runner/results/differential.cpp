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

RunStatuses::RunStatuses(Store& store, std::int64_t run_id) {
  const RunResultStatuses statuses = store.result_statuses(run_id);
  for (const auto& row : statuses.rows) {
    by_test_[{statuses.files[row.file], row.test_id}] = row.status;
  }
}

std::optional<CaseStatus> RunStatuses::find(const StoredCase& test) const {
  auto it = by_test_.find({test.file, test.test_id});
  if (it == by_test_.end()) return std::nullopt;
  return it->second;
}

}  // namespace devshim
