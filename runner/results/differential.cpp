#include "runner/results/differential.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <type_traits>
#include <unordered_set>

#include "parsers/text.h"

namespace devshim {

const std::vector<std::pair<std::string, std::string>>& differential_classes() {
  static const std::vector<std::pair<std::string, std::string>> classes{
      {"regression",
       "passed without the shim, fails with it, on code that ran both ways (it did no device "
       "work on a CUDA path): the shim broke it"},
      {"cuda_branch_failed",
       "passed without the shim, fails with it on a CUDA path: it did device work on CUDA, which "
       "its baseline could not, so the branch that fails never ran without the shim (not a "
       "regression; by cause below)"},
      {"lost",
       "reported without the shim, missing with it: its file failed to import or collect, "
       "crashed or timed out before it (counted as a regression)"},
      {"unlocked", "skipped or failed without the shim, passes with it"},
      {"compatible", "passes both ways"},
      {"cuda_branch_passed",
       "passes both ways, and with the shim on a CUDA path its baseline could not take: a CUDA "
       "branch that now runs and passes"},
      {"broken_both", "fails with the shim, did not pass without it"},
      {"newly_skipped", "passed without the shim, skipped with it"},
      {"skipped_both", "skipped with the shim, did not pass without it"},
      {"new_passed",
       "new under the shim: the baseline ran its file and did not have it (a case added where "
       "CUDA is \"available\"); passes"},
      {"new_failed", "new under the shim, fails"},
      {"new_skipped", "new under the shim, skipped"},
      {"renumbered",
       "a parameterized case numbered otherwise with the shim (cases added where CUDA is "
       "there) or whose values changed (drawn at random, naming the device), with no one case of "
       "the baseline to compare with: not compared"}};
  return classes;
}

bool is_differential_pass(CaseStatus s) {
  return s != CaseStatus::kFailed && s != CaseStatus::kError && s != CaseStatus::kSkipped;
}

std::string diff_class(std::optional<CaseStatus> baseline, CaseStatus shim, bool cuda_branch) {
  enum Outcome { kPass, kFail, kSkip };
  auto outcome = [](CaseStatus s) {
    if (is_differential_pass(s)) return kPass;
    return s == CaseStatus::kSkipped ? kSkip : kFail;
  };
  const Outcome before = baseline ? outcome(*baseline) : kFail;
  const Outcome after = outcome(shim);
  if (after == kPass) {
    if (before != kPass) return "unlocked";
    return cuda_branch ? "cuda_branch_passed" : "compatible";
  }
  if (after == kFail) {
    if (before != kPass) return "broken_both";
    return cuda_branch ? "cuda_branch_failed" : "regression";
  }
  return before == kPass ? "newly_skipped" : "skipped_both";
}

std::string new_class(CaseStatus shim) {
  if (is_differential_pass(shim)) return "new_passed";
  return shim == CaseStatus::kSkipped ? "new_skipped" : "new_failed";
}

bool ran_cuda_branch(const TestCase& test) {
  return test.cuda_contact == CudaContact::kDeviceWork ||
         (is_failure(test.status) && test.fails_in_cuda_branch);
}

bool ran_cuda_branch(const RunResultStatuses::Row& row) {
  return row.cuda_contact == CudaContact::kDeviceWork ||
         (is_failure(row.status) && row.fails_in_cuda_branch);
}

bool took_cuda_path(const RunResultStatuses::Row& row, std::optional<CaseStatus> baseline,
                    bool is_new) {
  const bool unskipped = baseline == CaseStatus::kSkipped && row.status != CaseStatus::kSkipped;
  return ran_cuda_branch(row) || unskipped || is_new;
}

bool only_asked_cuda(const RunResultStatuses::Row& row, std::optional<CaseStatus> baseline,
                     bool is_new) {
  return row.cuda_contact == CudaContact::kAsked && !took_cuda_path(row, baseline, is_new);
}

bool saw_cuda(const nlohmann::json& environment) {
  if (!environment.is_object()) return false;
  const auto it = environment.find("cuda_available");
  return it != environment.end() && it->is_boolean() && it->get<bool>();
}

bool counts_as_regression(std::string_view diff_class) {
  return diff_class == "regression" || diff_class == "lost";
}

namespace {

// The words of a text, lower-case: runs of letters and digits.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

template <std::size_t N>
bool one_of(const std::string& word, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

}  // namespace

bool skip_wants_no_gpu(std::string_view reason) {
  const std::string text = ascii_lower(reason);
  // The phrases test suites use for "runs only on the CPU" (accelerate's require_cpu).
  static constexpr std::array<std::string_view, 8> kCpuOnly = {
      "requires only a cpu", "only a cpu",       "cpu only",        "cpu-only",
      "only on cpu",         "only runs on cpu", "requires no gpu", "without a gpu"};
  if (std::any_of(kCpuOnly.begin(), kCpuOnly.end(),
                  [&](std::string_view p) { return text.find(p) != std::string::npos; })) {
    return true;
  }
  // Otherwise by meaning: a GPU (CUDA) that is there, or not needed, is the reason. "Skip if
  // GPU", "No need to mock if has GPU", "skipped when a GPU is present", "CUDA is available";
  // not "test requires a GPU", "Requires: [GPUs>=2]", "no GPU available", "CUDA not available".
  static constexpr std::array<std::string_view, 3> kGpu = {"gpu", "gpus", "cuda"};
  static constexpr std::array<std::string_view, 4> kIfThere = {"if", "when", "has", "have"};
  static constexpr std::array<std::string_view, 5> kThere = {"available", "present", "detected",
                                                             "found", "exists"};
  static constexpr std::array<std::string_view, 12> kWanted = {
      "no",    "not",  "without", "requires", "require", "required",
      "needs", "need", "only",    "non",      "missing", "unavailable"};
  const std::vector<std::string> words = words_of(text);
  const bool not_needed = text.find("no need") != std::string::npos ||
                          text.find("not needed") != std::string::npos ||
                          text.find("unnecessary") != std::string::npos;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!one_of(words[i], kGpu)) continue;
    if (not_needed) return true;
    bool if_there = false, wanted = false, there = false;
    for (std::size_t k = i >= 3 ? i - 3 : 0; k < i; ++k) {
      if_there = if_there || one_of(words[k], kIfThere);
      wanted = wanted || one_of(words[k], kWanted);
    }
    for (std::size_t k = i + 1; k < words.size() && k <= i + 3; ++k) {
      there = there || one_of(words[k], kThere);
      wanted = wanted || one_of(words[k], kWanted);
    }
    if (!wanted && (if_there || there)) return true;
  }
  return false;
}

namespace {

// A test id and a file index in one key: test ids (SQLite rowids of tests) stay below 2^40.
std::uint64_t key_of(std::uint32_t file, std::int64_t test_id) {
  return (static_cast<std::uint64_t>(file) << 40U) ^ static_cast<std::uint64_t>(test_id);
}

}  // namespace

RunStatuses::RunStatuses(const RunResultStatuses& now, const RunResultStatuses& other,
                         const std::set<std::string>& complete_files)
    : complete_(now.files.size()) {
  for (std::size_t i = 0; i < now.files.size(); ++i) {
    complete_[i] = complete_files.count(now.files[i]) > 0;
  }
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
  for (const auto& [path, test_id] : other.renumbered) {
    auto it = std::lower_bound(now.files.begin(), now.files.end(), path);
    if (it != now.files.end() && *it == path) {
      renumbered_.insert(key_of(static_cast<std::uint32_t>(it - now.files.begin()), test_id));
    }
  }
}

bool RunStatuses::renumbered(const RunResultStatuses::Row& row) const {
  return renumbered_.count(key_of(row.file, row.test_id)) > 0;
}

bool RunStatuses::is_new(const RunResultStatuses::Row& row) const {
  return row.file < complete_.size() && complete_[row.file] && !renumbered(row) && !find(row);
}

std::string RunStatuses::diff_class_of(const RunResultStatuses::Row& row,
                                       bool cuda_branches) const {
  if (renumbered(row)) return "renumbered";
  if (is_new(row)) return new_class(row.status);
  return diff_class(find(row), row.status, cuda_branches && ran_cuda_branch(row));
}

std::optional<CaseStatus> RunStatuses::find(const RunResultStatuses::Row& row) const {
  auto it = by_key_.find(key_of(row.file, row.test_id));
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

std::vector<RunResultStatuses::Row> missing_rows(const RunResultStatuses& now,
                                                 const RunResultStatuses& other,
                                                 const std::vector<std::string>& in_files) {
  std::unordered_set<std::uint64_t> reported;
  reported.reserve(now.rows.size());
  for (const auto& row : now.rows) reported.insert(key_of(row.file, row.test_id));
  // Other's file index -> now's; nullopt: now has no result in that file.
  std::vector<std::optional<std::uint32_t>> to_now(other.files.size());
  std::vector<bool> wanted(other.files.size());
  for (std::size_t i = 0; i < other.files.size(); ++i) {
    wanted[i] = std::binary_search(in_files.begin(), in_files.end(), other.files[i]);
    auto it = std::lower_bound(now.files.begin(), now.files.end(), other.files[i]);
    if (it != now.files.end() && *it == other.files[i]) {
      to_now[i] = static_cast<std::uint32_t>(it - now.files.begin());
    }
  }
  std::vector<RunResultStatuses::Row> out;
  for (const auto& row : other.rows) {
    if (!wanted[row.file]) continue;
    const auto file = to_now[row.file];
    if (!file || reported.count(key_of(*file, row.test_id)) == 0) out.push_back(row);
  }
  return out;
}

namespace {

// pytest's ids: each "-"-separated part that is an identifier ending in a number below `cases`
// (no leading zero) is taken as "<argument><index>" (pytest's id of a value it does not print,
// `device1`).
std::string without_pytest_indexes(std::string_view name, std::size_t open, std::size_t cases) {
  const std::size_t close = name.rfind(']');
  if (close == std::string_view::npos || close < open) return "";
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  std::string out(name.substr(0, open + 1));
  bool changed = false;
  for (std::size_t start = open + 1;;) {
    const std::size_t end = std::min(name.find('-', start), close);
    const std::string_view part = name.substr(start, end - start);
    std::size_t digits = part.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(part[digits - 1])) != 0) {
      --digits;
    }
    std::size_t index = cases;
    const std::string_view number = part.substr(digits);
    const bool no_leading_zero = number.size() == 1 || number.front() != '0';
    if (digits > 0 && digits < part.size() && no_leading_zero) {
      std::from_chars(number.data(), number.data() + number.size(), index);
    }
    const bool indexed = index < cases && std::isdigit(static_cast<unsigned char>(part[0])) == 0 &&
                         std::all_of(part.begin(), part.begin() + digits, word);
    out += indexed ? std::string(part.substr(0, digits)) + "#" : std::string(part);
    changed = changed || indexed;
    if (end == close) break;
    out += '-';
    start = end + 1;
  }
  out += name.substr(close);
  return changed ? out : "";
}

}  // namespace

std::string without_case_index(std::string_view name, std::size_t cases) {
  if (const std::size_t open = name.find('['); open != std::string_view::npos) {
    return without_pytest_indexes(name, open, cases);
  }
  for (std::size_t p = name.find('_'); p != std::string_view::npos; p = name.find('_', p + 1)) {
    std::size_t end = p + 1;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])) != 0) ++end;
    if (end == p + 1 || (end < name.size() && name[end] != '_')) continue;
    return std::string(name.substr(0, p)) + "_#" + std::string(name.substr(end));
  }
  return "";
}

std::vector<std::pair<std::string, std::size_t>> pytest_unique_id_origins(std::string_view name) {
  std::vector<std::pair<std::string, std::size_t>> origins;
  const std::size_t open = name.find('[');
  if (open == std::string_view::npos || name.back() != ']') return origins;
  const std::size_t close = name.size() - 1;
  auto digit = [&](std::size_t i) {
    return std::isdigit(static_cast<unsigned char>(name[i])) != 0;
  };
  // Each parametrize's id ends where a "-" or the closing bracket follows.
  for (std::size_t at = open + 1; at <= close; ++at) {
    if (at != close && name[at] != '-') continue;
    std::size_t digits = at;
    while (digits > open + 1 && digit(digits - 1)) --digits;
    // No number, or a number alone or after "=" (a value: `[3]`, `[a-3]`, `[n=3]`).
    if (digits == at || digits == open + 1 || name[digits - 1] == '-' || name[digits - 1] == '=') {
      continue;
    }
    std::size_t occurrence = 0;
    const auto [end, ec] = std::from_chars(name.data() + digits, name.data() + at, occurrence);
    if (ec != std::errc() || end != name.data() + at) continue;
    std::size_t id_end = digits;
    // "_" separates the number from an id that ends in a digit.
    if (name[id_end - 1] == '_' && id_end - 1 > open + 1 && digit(id_end - 2)) --id_end;
    origins.emplace_back(std::string(name.substr(0, id_end)) + std::string(name.substr(at)),
                         occurrence);
  }
  return origins;
}

namespace {

// The tests each run reports and the other does not (result ids), and the files they are in.
struct Unmatched {
  std::set<std::string_view> files;
  std::unordered_set<std::int64_t> now, other;
};

Unmatched unmatched_of(const RunResultStatuses& now, const RunResultStatuses& other) {
  Unmatched u;
  for (const auto& row : missing_rows(now, other, other.files)) {
    u.files.insert(other.files[row.file]);
    u.other.insert(row.result_id);
  }
  for (const auto& row : missing_rows(other, now, now.files)) {
    u.files.insert(now.files[row.file]);
    u.now.insert(row.result_id);
  }
  return u;
}

// `other` being aligned to `now`: its rows to drop (not lost), those paired with cases of now,
// and now's rows paired with cases of other.
struct Alignment {
  const RunResultStatuses& now;
  const RunResultStatuses& other;
  RunResultStatuses aligned;
  std::vector<bool> drop, paired, now_paired;
};

// A group of cases that cannot be paired one by one: now's are renumbered, other's removed (not
// lost), and the regressions the counts prove are counted. Each of other's passing cases that
// still passes (or skips) in now is a case of now that does not fail, so at least (other's
// passing) - (now's not failing) of them fail now or are gone (lost), whether cases were added,
// taken away or both.
void count_unpaired(Alignment& a, const std::vector<std::size_t>& now_side,
                    const std::vector<std::size_t>& other_side) {
  const auto not_failing =
      static_cast<std::size_t>(std::count_if(now_side.begin(), now_side.end(), [&](std::size_t i) {
        return !is_failure(a.now.rows[i].status);
      }));
  const auto passed = static_cast<std::size_t>(
      std::count_if(other_side.begin(), other_side.end(),
                    [&](std::size_t i) { return is_differential_pass(a.other.rows[i].status); }));
  if (passed > not_failing) a.aligned.renumbered_regressions += passed - not_failing;
  for (std::size_t i : now_side) {
    a.aligned.renumbered.emplace(a.now.files[a.now.rows[i].file], a.now.rows[i].test_id);
  }
  for (std::size_t i : other_side) a.drop[i] = true;
}

// Cases whose values changed: parameters drawn at random when pytest collects (e3nn's
// random_irreps()), or that name the device. Of a pytest test with as many cases in both runs
// (cases_of: now's, other's), the cases each side has and the other lacks, outside the groups
// paired already, where other ran one of them: the values were replaced one for one, counted as
// a group whose cases cannot be paired. A test with fewer or more cases (a file that stopped
// early, cases added) leaves other's cases lost; where other skipped them all, the masquerade's
// replacement decides (renumbering_aligned).
template <typename FunctionOf, typename CasesOf>
void count_changed_values(Alignment& a, const std::vector<std::size_t>& now_rows,
                          const std::vector<std::size_t>& other_rows, const Unmatched& unmatched,
                          const FunctionOf& function_of, const CasesOf& cases_of) {
  using Function = typename CasesOf::key_type;
  std::map<Function, std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> changed;
  for (std::size_t i : now_rows) {
    if (a.now_paired[i] || unmatched.now.count(a.now.rows[i].result_id) == 0) continue;
    if (auto f = function_of(a.now, i)) changed[*f].first.push_back(i);
  }
  for (std::size_t i : other_rows) {
    if (a.paired[i] || unmatched.other.count(a.other.rows[i].result_id) == 0) continue;
    if (auto f = function_of(a.other, i)) changed[*f].second.push_back(i);
  }
  for (const auto& [function, sides] : changed) {
    const auto& [now_side, other_side] = sides;
    const bool ran = std::any_of(other_side.begin(), other_side.end(), [&](std::size_t i) {
      return a.other.rows[i].status != CaseStatus::kSkipped;
    });
    const auto& cases = cases_of.at(function);
    if (now_side.empty() || other_side.empty() || cases.first != cases.second || !ran) continue;
    count_unpaired(a, now_side, other_side);
    for (std::size_t i : other_side) a.paired[i] = true;
  }
}

// Cases the masquerade replaced rather than renumbered: a pytest case of other that other
// skipped and now lacks, where now has a case of the same test that other lacks (an empty
// parameter list's [NOTSET], a value that depends on the device: `cpu:0` becomes `cuda:0`).
// Other never ran it, so no pass can be lost with it, and now ran the test in its place: not
// lost. At most as many are dropped as now has such cases: a case now lacks while every case it
// has is one of other's (litgpt's test_model.py, which crashed before it) did not run, and is
// lost. Returns whether any was dropped.
template <typename FunctionOf>
bool drop_replaced(Alignment& a, const std::vector<std::size_t>& now_rows,
                   const std::vector<std::size_t>& other_rows, const Unmatched& unmatched,
                   const FunctionOf& function_of) {
  using Function =
      typename std::invoke_result_t<FunctionOf, const RunResultStatuses&, std::size_t>::value_type;
  std::map<Function, std::size_t> replacements;  // now's cases other lacks, by test
  for (std::size_t i : now_rows) {
    if (a.now_paired[i] || unmatched.now.count(a.now.rows[i].result_id) == 0) continue;
    if (auto f = function_of(a.now, i)) ++replacements[*f];
  }
  bool dropped = false;
  for (std::size_t i : other_rows) {
    const auto& row = a.other.rows[i];
    if (a.paired[i] || row.status != CaseStatus::kSkipped ||
        unmatched.other.count(row.result_id) == 0) {
      continue;
    }
    const auto f = function_of(a.other, i);
    if (!f) continue;
    auto left = replacements.find(*f);
    if (left == replacements.end() || left->second == 0) continue;
    --left->second;
    a.drop[i] = true;
    dropped = true;
  }
  return dropped;
}

// A test name whose object addresses are masked: a pytest id of a value it prints with its repr
// (`<function <lambda> at 0x7ff3c65e42c0>`) names another address in every process.
std::string without_addresses(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size();) {
    // Six hex digits at least: an address, not a value such as 0x1f.
    if (const std::size_t n = hex_number_length(name, i); n >= 2 + 6 && name[i + 1] == 'x') {
      out += "0x#";
      i += n;
    } else {
      out += name[i++];
    }
  }
  return out;
}

// (path, class, test name with addresses masked) of unmatched rows of one side, not in a group
// yet: the rows as they are, and, by the name each may have had before pytest made it unique
// (pytest_unique_id_origins), the rows so made and their occurrences.
using MaskedKey = std::tuple<std::string_view, std::string_view, std::string>;
struct MaskedSide {
  std::map<MaskedKey, std::vector<std::size_t>> as_is;
  /// Each row with the occurrence pytest numbered it, in the run's order.
  std::map<MaskedKey, std::vector<std::pair<std::size_t, std::size_t>>> made_unique;
};

template <typename Names>
MaskedSide masked_side(const RunResultStatuses& run, const std::vector<std::size_t>& rows,
                       const std::vector<bool>& paired,
                       const std::unordered_set<std::int64_t>& unmatched, const Names& names) {
  MaskedSide side;
  for (std::size_t i : rows) {
    if (paired[i] || unmatched.count(run.rows[i].result_id) == 0) continue;
    auto it = names.find(run.rows[i].test_id);
    if (it == names.end()) continue;
    const std::string_view path = run.files[run.rows[i].file], cls = it->second.first;
    std::string name = without_addresses(it->second.second);
    for (auto& [origin, occurrence] : pytest_unique_id_origins(name)) {
      side.made_unique[MaskedKey{path, cls, std::move(origin)}].emplace_back(i, occurrence);
    }
    side.as_is[MaskedKey{path, cls, std::move(name)}].push_back(i);
  }
  return side;
}

// Cases whose names differ by object addresses only: as many on each side, in the same order
// (pytest collects in order), are the same cases.
template <typename Names>
void pair_by_masked_addresses(Alignment& a, const std::vector<std::size_t>& now_rows,
                              const std::vector<std::size_t>& other_rows,
                              const Unmatched& unmatched, const Names& names) {
  const MaskedSide now = masked_side(a.now, now_rows, a.now_paired, unmatched.now, names);
  const MaskedSide other = masked_side(a.other, other_rows, a.paired, unmatched.other, names);
  for (const auto& [key, now_side] : now.as_is) {
    auto it = other.as_is.find(key);
    if (it == other.as_is.end() || it->second.size() != now_side.size()) continue;
    for (std::size_t k = 0; k < now_side.size(); ++k) {
      a.aligned.rows[it->second[k]].test_id = a.now.rows[now_side[k]].test_id;
      a.paired[it->second[k]] = true;
      a.now_paired[now_side[k]] = true;
    }
  }
}

// Cases pytest made unique (pytest_unique_id_origins): a case of one side, unmatched and in no
// group yet, whose id (addresses masked) the other side has only with pytest's occurrences (0 and
// 1 at least, as pytest numbers them), is one group with them. Where `other` has the one case
// `[cpu]` and `now` its occurrences `[cpu0]`, `[cpu1]`, ... (a device list that gains a "cuda"
// device printing as the CPU's), occurrence 0 is other's case, compared, and the others are new
// in `now` (RunStatuses::is_new). Any other shape is counted as cases that cannot be paired.
template <typename Names>
void count_made_unique(Alignment& a, const std::vector<std::size_t>& now_rows,
                       const std::vector<std::size_t>& other_rows, const Unmatched& unmatched,
                       const Names& names) {
  const MaskedSide now = masked_side(a.now, now_rows, a.now_paired, unmatched.now, names);
  const MaskedSide other = masked_side(a.other, other_rows, a.paired, unmatched.other, names);
  auto group = [&](const MaskedSide& unique_side, const MaskedSide& as_is_side,
                   bool unique_is_now) {
    for (const auto& [key, made] : unique_side.made_unique) {
      std::vector<std::size_t> rows;
      std::set<std::size_t> occurrences;
      for (const auto& [row, occurrence] : made) {
        rows.push_back(row);
        occurrences.insert(occurrence);
      }
      auto origin = as_is_side.as_is.find(key);
      if (origin == as_is_side.as_is.end() || occurrences.count(0) == 0 ||
          occurrences.count(1) == 0) {
        continue;
      }
      const auto& now_side = unique_is_now ? rows : origin->second;
      const auto& other_side = unique_is_now ? origin->second : rows;
      if (std::any_of(now_side.begin(), now_side.end(), [&](auto i) { return a.now_paired[i]; }) ||
          std::any_of(other_side.begin(), other_side.end(), [&](auto i) { return a.paired[i]; })) {
        continue;
      }
      const auto first =
          std::find_if(made.begin(), made.end(), [](const auto& m) { return m.second == 0; });
      const bool one_origin =
          origin->second.size() == 1 &&
          std::count_if(made.begin(), made.end(), [](const auto& m) { return m.second == 0; }) == 1;
      if (unique_is_now && one_origin) {
        a.aligned.rows[other_side.front()].test_id = a.now.rows[first->first].test_id;
      } else {
        count_unpaired(a, now_side, other_side);
      }
      for (std::size_t i : now_side) a.now_paired[i] = true;
      for (std::size_t i : other_side) a.paired[i] = true;
    }
  };
  group(now, other, true);
  group(other, now, false);
}

// The aligned rows without those dropped.
RunResultStatuses without_dropped(Alignment& a) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < a.aligned.rows.size(); ++i) {
    if (!a.drop[i]) a.aligned.rows[kept++] = a.aligned.rows[i];
  }
  a.aligned.rows.resize(kept);
  return std::move(a.aligned);
}

}  // namespace

std::optional<RunResultStatuses> renumbering_aligned(Store& store, const RunResultStatuses& now,
                                                     const RunResultStatuses& other) {
  // Renumbering leaves tests of one side without their name on the other: only the files where
  // that happened are read (every test name of theirs, both sides).
  const Unmatched unmatched = unmatched_of(now, other);
  const std::set<std::string_view>& files = unmatched.files;
  if (files.empty()) return std::nullopt;
  auto rows_in = [&](const RunResultStatuses& run) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < run.rows.size(); ++i) {
      if (files.count(run.files[run.rows[i].file]) > 0) out.push_back(i);
    }
    return out;
  };
  const std::vector<std::size_t> now_rows = rows_in(now), other_rows = rows_in(other);
  Alignment a{now,
              other,
              other,
              std::vector<bool>(other.rows.size()),
              std::vector<bool>(other.rows.size()),
              std::vector<bool>(now.rows.size())};
  std::vector<std::int64_t> ids;
  ids.reserve(now_rows.size() + other_rows.size());
  for (std::size_t i : now_rows) ids.push_back(now.rows[i].test_id);
  for (std::size_t i : other_rows) ids.push_back(other.rows[i].test_id);
  const auto names = store.test_names(ids);
  // A pytest test's (path, class, name before its "[...]" id).
  using Function = std::tuple<std::string_view, std::string_view, std::string_view>;
  auto function_of = [&](const RunResultStatuses& run, std::size_t i) -> std::optional<Function> {
    auto it = names.find(run.rows[i].test_id);
    if (it == names.end()) return std::nullopt;
    const std::string& name = it->second.second;
    const std::size_t open = name.find('[');
    if (open == std::string::npos) return std::nullopt;
    return Function{run.files[run.rows[i].file], it->second.first,
                    std::string_view(name).substr(0, open)};
  };
  // How many cases each pytest test has in now and in other: pytest's indexes are below that.
  // Each row's entry (map nodes stay put), looked up once; null for a test without an id.
  using Cases = std::pair<std::size_t, std::size_t>;
  std::map<Function, Cases> cases_of;
  auto count_cases = [&](const RunResultStatuses& run, const std::vector<std::size_t>& rows,
                         bool is_now) {
    std::vector<const Cases*> out;
    out.reserve(rows.size());
    for (std::size_t i : rows) {
      Cases* cases = nullptr;
      if (auto f = function_of(run, i)) {
        cases = &cases_of[*f];
        ++(is_now ? cases->first : cases->second);
      }
      out.push_back(cases);
    }
    return out;
  };
  const std::vector<const Cases*> now_cases = count_cases(now, now_rows, true);
  const std::vector<const Cases*> other_cases = count_cases(other, other_rows, false);
  // (path, class, name without its index) → the rows of each side, in their run's order.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> groups;
  auto add = [&](const RunResultStatuses& run, std::size_t i, const Cases* cases, bool is_now) {
    auto it = names.find(run.rows[i].test_id);
    if (it == names.end()) return;
    std::string key =
        without_case_index(it->second.second, cases ? std::max(cases->first, cases->second) : 0);
    if (key.empty()) return;
    auto& sides = groups[Key{run.files[run.rows[i].file], it->second.first, std::move(key)}];
    (is_now ? sides.first : sides.second).push_back(i);
  };
  for (std::size_t k = 0; k < now_rows.size(); ++k) add(now, now_rows[k], now_cases[k], true);
  for (std::size_t k = 0; k < other_rows.size(); ++k) {
    add(other, other_rows[k], other_cases[k], false);
  }
  // A pytest test with as many cases in both runs: its groups of unequal sizes are values that
  // moved between those pytest names by index and those it prints (e3nn draws objects and
  // strings at random), so its cases are compared by their counts below, as one group.
  auto same_case_count = [&](std::size_t now_row) {
    const auto f = function_of(now, now_row);
    if (!f) return false;
    const Cases& cases = cases_of.at(*f);
    return cases.first == cases.second;
  };
  for (const auto& [key, rows] : groups) {
    const auto& [now_side, other_side] = rows;
    if (now_side.empty() || other_side.empty()) continue;
    if (now_side.size() != other_side.size() && same_case_count(now_side.front())) continue;
    for (std::size_t i : other_side) a.paired[i] = true;
    for (std::size_t i : now_side) a.now_paired[i] = true;
    if (now_side.size() == other_side.size()) {
      // As many cases: the same ones, in the same order (parameterized keeps the order of its
      // case list), whatever their numbers.
      for (std::size_t k = 0; k < now_side.size(); ++k) {
        a.aligned.rows[other_side[k]].test_id = now.rows[now_side[k]].test_id;
      }
      continue;
    }
    // Cases added or taken away: which case is which cannot be told from the names, not even
    // where a name is the same on both sides (its number now counts other cases).
    count_unpaired(a, now_side, other_side);
  }
  pair_by_masked_addresses(a, now_rows, other_rows, unmatched, names);
  count_made_unique(a, now_rows, other_rows, unmatched, names);
  count_changed_values(a, now_rows, other_rows, unmatched, function_of, cases_of);
  const bool replaced = drop_replaced(a, now_rows, other_rows, unmatched, function_of);
  if (!a.aligned.renumbered.empty() || replaced) return without_dropped(a);
  return std::move(a.aligned);
}

RunResultStatuses aligned_statuses(Store& store, const RunResultStatuses& now,
                                   std::int64_t other_run) {
  RunResultStatuses other = store.result_statuses(other_run);
  if (auto aligned = renumbering_aligned(store, now, other)) return std::move(*aligned);
  return other;
}

std::vector<StoredCase> lost_cases(Store& store, const RunResultStatuses& now,
                                   const RunResultStatuses& baseline,
                                   const std::vector<FileRecord>& planned) {
  std::vector<std::string> paths;
  paths.reserve(planned.size());
  for (const FileRecord& f : planned) paths.push_back(f.path);
  std::sort(paths.begin(), paths.end());
  std::vector<std::int64_t> ids;
  for (const auto& row : missing_rows(now, baseline, paths)) ids.push_back(row.result_id);
  return store.cases_by_id(ids);
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
                        .signature = !c.signature.empty(),
                        .cuda_contact = c.test.cuda_contact,
                        .fails_in_cuda_branch = c.test.fails_in_cuda_branch});
  }
  return out;
}

}  // namespace devshim
