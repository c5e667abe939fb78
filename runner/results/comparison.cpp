#include "runner/results/comparison.h"

namespace devshim {

namespace {

enum class Outcome { kPass, kFail, kSkip };

Outcome outcome(CaseStatus s) {
  if (is_failure(s)) return Outcome::kFail;
  return s == CaseStatus::kSkipped ? Outcome::kSkip : Outcome::kPass;
}

std::string key_of(const std::string& file, const TestCase& t) {
  return file + '\n' + t.classname + '\n' + t.name;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& comparison_classes() {
  static const std::vector<std::pair<std::string, std::string>> classes{
      {"regressed", "passed in A, fails in B"},
      {"lost",
       "in A, missing from B: its file failed, crashed or timed out before it, or the test was "
       "removed (counted as a regression)"},
      {"fixed", "failed in A, passes in B"},
      {"newly_skipped", "ran in A (or is new), skips in B"},
      {"newly_run", "skipped in A (or is new), runs in B"},
      {"same", "the same outcome in both"}};
  return classes;
}

std::string comparison_class(std::optional<CaseStatus> a, std::optional<CaseStatus> b) {
  if (!b) return "lost";
  const Outcome now = outcome(*b);
  if (!a) return now == Outcome::kSkip ? "newly_skipped" : "newly_run";
  const Outcome then = outcome(*a);
  if (then == now) return "same";
  if (now == Outcome::kSkip) return "newly_skipped";
  if (then == Outcome::kSkip) return "newly_run";
  return now == Outcome::kFail ? "regressed" : "fixed";
}

RunComparison compare_runs(Store& store, const RunRecord& a, const RunRecord& b) {
  RunComparison out;
  out.a = a;
  out.b = b;
  for (const auto& [cls, meaning] : comparison_classes()) out.counts[cls] = 0;
  std::map<std::string, StoredCase> in_a;
  for (auto& c : store.cases(a.id)) {
    std::string key = key_of(c.file, c.test);
    in_a.emplace(std::move(key), std::move(c));
  }
  auto add = [&](const std::string& cls, const StoredCase& shown, std::optional<CaseStatus> sa,
                 std::optional<CaseStatus> sb) {
    ++out.counts[cls];
    if (cls == "same") return;
    out.tests[cls].push_back({shown.file, shown.test.classname, shown.test.name,
                              sa ? std::string(to_string(*sa)) : "absent",
                              sb ? std::string(to_string(*sb)) : "absent", failure_text(shown.test),
                              shown.test.source});
  };
  for (const auto& c : store.cases(b.id)) {
    auto it = in_a.find(key_of(c.file, c.test));
    std::optional<CaseStatus> sa;
    if (it != in_a.end()) {
      sa = it->second.test.status;
      in_a.erase(it);
    }
    add(comparison_class(sa, c.test.status), c, sa, c.test.status);
  }
  for (const auto& [key, c] : in_a) add("lost", c, c.test.status, std::nullopt);
  return out;
}

}  // namespace devshim
