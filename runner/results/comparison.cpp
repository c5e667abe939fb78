#include "runner/results/comparison.h"

#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "runner/results/differential.h"

namespace devshim {

namespace {

enum class Outcome { kPass, kFail, kSkip };

Outcome outcome(CaseStatus s) {
  if (is_failure(s)) return Outcome::kFail;
  return s == CaseStatus::kSkipped ? Outcome::kSkip : Outcome::kPass;
}

// A test id names its class and test name in every run of a store.
std::string key_of(const std::string& file, std::int64_t test_id) {
  return file + '\n' + std::to_string(test_id);
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& comparison_classes() {
  static const std::vector<std::pair<std::string, std::string>> classes{
      {"regressed", "passed in A, fails in B"},
      {"cuda_branch_failed",
       "passed in A, fails in B on a CUDA path: B did device work on CUDA that A, seeing no CUDA, "
       "did not (a branch A never ran: not a regression)"},
      {"lost",
       "in A, missing from B: its file failed, crashed or timed out before it, or the test was "
       "removed (counted as a regression)"},
      {"fixed", "failed in A, passes in B"},
      {"newly_skipped", "ran in A (or is new), skips in B"},
      {"newly_run", "skipped in A (or is new), runs in B"},
      {"renumbered",
       "a parameterized case numbered otherwise in B, in a group with more or fewer cases than in "
       "A, or whose values changed one for one: no one case of A to compare it with (A's cases "
       "of the group are not lost)"},
      {"same", "the same outcome in both"}};
  return classes;
}

std::string comparison_class(std::optional<CaseStatus> a, std::optional<CaseStatus> b,
                             bool cuda_branch) {
  if (!b) return "lost";
  const Outcome now = outcome(*b);
  if (!a) return now == Outcome::kSkip ? "newly_skipped" : "newly_run";
  const Outcome then = outcome(*a);
  if (then == now) return "same";
  if (now == Outcome::kSkip) return "newly_skipped";
  if (then == Outcome::kSkip) return "newly_run";
  if (now == Outcome::kPass) return "fixed";
  return cuda_branch ? "cuda_branch_failed" : "regressed";
}

RunComparison compare_runs(Store& store, const RunRecord& a, const RunRecord& b) {
  RunComparison out;
  out.a = a;
  out.b = b;
  for (const auto& [cls, meaning] : comparison_classes()) out.counts[cls] = 0;
  const RunResultStatuses statuses_b = store.result_statuses(b.id);
  const auto aligned = renumbering_aligned(store, statuses_b, store.result_statuses(a.id));
  // A's result id → the test id of B it is matched with; A's results missing from it belong to
  // renumbered groups.
  std::unordered_map<std::int64_t, std::int64_t> a_matched;
  if (aligned) {
    a_matched.reserve(aligned->rows.size());
    for (const auto& row : aligned->rows) a_matched.emplace(row.result_id, row.test_id);
    out.renumbered_regressions = static_cast<int>(aligned->renumbered_regressions);
  }
  // A's cases that have a counterpart to look for in B (in A's order), by file and test id.
  std::vector<StoredCase> cases_a;
  std::unordered_map<std::string, std::size_t> in_a;
  for (auto& c : store.cases(a.id)) {
    std::int64_t test_id = c.test_id;
    if (aligned) {
      auto it = a_matched.find(c.result_id);
      if (it == a_matched.end()) continue;
      test_id = it->second;
    }
    in_a.emplace(key_of(c.file, test_id), cases_a.size());
    cases_a.push_back(std::move(c));
  }
  std::vector<bool> matched(cases_a.size());
  // A run without the shim that saw no CUDA (saw_cuda) could not take a CUDA path B took; a shim
  // run, whose masquerade said CUDA was there, took it too.
  const bool cuda_branches = a.mode == "baseline" && !saw_cuda(environment_json(a));
  auto text = [](std::optional<CaseStatus> s) {
    return s ? std::string(to_string(*s)) : std::string("absent");
  };
  auto add = [&](const std::string& cls, const StoredCase& shown, std::string status_a,
                 std::optional<CaseStatus> sb) {
    ++out.counts[cls];
    if (cls == "same") return;
    out.tests[cls].push_back({shown.file, shown.test.classname, shown.test.name,
                              std::move(status_a), text(sb), failure_text(shown.test),
                              shown.test.source});
  };
  for (const auto& c : store.cases(b.id)) {
    if (aligned && aligned->renumbered.count({c.file, c.test_id}) > 0) {
      add("renumbered", c, "renumbered", c.test.status);
      continue;
    }
    auto it = in_a.find(key_of(c.file, c.test_id));
    std::optional<CaseStatus> sa;
    bool cuda_branch = false;
    if (it != in_a.end()) {
      sa = cases_a[it->second].test.status;
      matched[it->second] = true;
      cuda_branch = cuda_branches && ran_cuda_branch(c.test);
    }
    add(comparison_class(sa, c.test.status, cuda_branch), c, text(sa), c.test.status);
  }
  for (std::size_t i = 0; i < cases_a.size(); ++i) {
    if (!matched[i]) add("lost", cases_a[i], text(cases_a[i].test.status), std::nullopt);
  }
  return out;
}

int comparison_count(const RunComparison& c, const std::string& cls) {
  auto it = c.counts.find(cls);
  return it == c.counts.end() ? 0 : it->second;
}

int comparison_regressions(const RunComparison& c) {
  return comparison_count(c, "regressed") + comparison_count(c, "lost") + c.renumbered_regressions;
}

}  // namespace devshim
