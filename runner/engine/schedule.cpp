#include "runner/engine/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <numeric>

#include "base/error.h"

namespace devshim {

namespace {

// A whole non-negative decimal number, or nullopt.
std::optional<int> parse_count(const std::string& s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::string env_value(const Environment& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

std::optional<Shard> checked(int index, int total, const std::string& what) {
  if (total < 1 || index < 0 || index >= total) {
    throw UsageError(fmt::format("{}: shard {} of {} does not exist", what, index, total));
  }
  if (total == 1) return std::nullopt;
  return Shard{index, total};
}

// Indexes by expected duration (of files, or of units of files), longest first; equal ones keep
// their order.
std::vector<std::size_t> longest_first(const std::vector<double>& estimates) {
  std::vector<std::size_t> idx(estimates.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return estimates[a] > estimates[b]; });
  return idx;
}

// The unit of each file (0 … units - 1): files that hold a common lock, directly or through
// others, share one; units are numbered in the order of their first file.
std::vector<std::size_t> lock_units(std::size_t files, const FileLocks& locks) {
  std::vector<std::size_t> parent(files);
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&parent](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::map<std::string, std::size_t> first_holder;
  for (std::size_t i = 0; i < std::min(files, locks.size()); ++i) {
    for (const std::string& lock : locks[i]) {
      auto [it, added] = first_holder.emplace(lock, i);
      if (!added) parent[root(i)] = root(it->second);
    }
  }
  std::vector<std::size_t> unit(files);
  std::map<std::size_t, std::size_t> unit_of_root;
  for (std::size_t i = 0; i < files; ++i) {
    unit[i] = unit_of_root.emplace(root(i), unit_of_root.size()).first->second;
  }
  return unit;
}

}  // namespace

std::string shard_text(const Shard& shard) {
  return fmt::format("{}/{}", shard.index + 1, shard.total);
}

std::optional<Shard> resolve_shard(const std::string& option, int total_option,
                                   const Environment& env) {
  if (!option.empty()) {
    const auto slash = option.find('/');
    const auto i = parse_count(option.substr(0, slash));
    const auto n =
        slash == std::string::npos ? std::nullopt : parse_count(option.substr(slash + 1));
    if (!i || !n || *i < 1 || *n < 1 || *i > *n) {
      throw UsageError(
          fmt::format("--shard \"{}\": expected I/N with 1 <= I <= N, e.g. --shard 2/4", option));
    }
    return checked(*i - 1, *n, "--shard");
  }
  const std::string bazel_total = env_value(env, "TEST_TOTAL_SHARDS");
  if (!bazel_total.empty()) {
    const auto n = parse_count(bazel_total);
    const auto i = parse_count(env_value(env, "TEST_SHARD_INDEX"));
    if (!n || !i) {
      throw UsageError(fmt::format(
          "TEST_TOTAL_SHARDS=\"{}\" and TEST_SHARD_INDEX=\"{}\": expected whole numbers",
          bazel_total, env_value(env, "TEST_SHARD_INDEX")));
    }
    return checked(*i, *n, "TEST_TOTAL_SHARDS/TEST_SHARD_INDEX");
  }
  const std::string k8s_index = env_value(env, "JOB_COMPLETION_INDEX");
  if (!k8s_index.empty()) {
    const auto i = parse_count(k8s_index);
    std::optional<int> n = total_option > 0 ? std::optional<int>(total_option) : std::nullopt;
    const std::string total_var = env_value(env, "DEVSHIM_SHARD_TOTAL");
    if (!n && !total_var.empty()) n = parse_count(total_var);
    if (!i) {
      throw UsageError(
          fmt::format("JOB_COMPLETION_INDEX=\"{}\": expected a whole number", k8s_index));
    }
    if (!n) {
      throw UsageError(fmt::format(
          "JOB_COMPLETION_INDEX={} is set but the number of shards is not: give --shard-total N "
          "or set DEVSHIM_SHARD_TOTAL (the Job's completions)",
          k8s_index));
    }
    return checked(*i, *n, "JOB_COMPLETION_INDEX");
  }
  return std::nullopt;
}

std::vector<double> estimate_durations(const std::vector<TestFile>& files,
                                       const std::map<std::string, double>& recorded) {
  std::vector<double> known;
  for (const auto& f : files) {
    if (auto it = recorded.find(f.rel_path); it != recorded.end()) known.push_back(it->second);
  }
  double median = 1;
  if (!known.empty()) {
    std::sort(known.begin(), known.end());
    const std::size_t mid = known.size() / 2;
    median = known.size() % 2 == 1 ? known[mid] : (known[mid - 1] + known[mid]) / 2;
  }
  std::vector<double> out;
  out.reserve(files.size());
  for (const auto& f : files) {
    auto it = recorded.find(f.rel_path);
    out.push_back(it == recorded.end() ? median : it->second);
  }
  return out;
}

std::vector<TestFile> order_files(const std::vector<TestFile>& files,
                                  const std::vector<double>& estimates,
                                  const std::set<std::string>& first) {
  std::vector<std::size_t> idx = longest_first(estimates);
  std::stable_partition(idx.begin(), idx.end(),
                        [&](std::size_t i) { return first.count(files[i].rel_path) > 0; });
  std::vector<TestFile> out;
  out.reserve(files.size());
  for (std::size_t i : idx) out.push_back(files[i]);
  return out;
}

std::vector<int> assign_shards(const std::vector<TestFile>& files,
                               const std::vector<double>& estimates, int total,
                               const FileLocks& locks) {
  std::vector<int> shard(files.size(), 0);
  if (total <= 1) return shard;
  const std::vector<std::size_t> unit = lock_units(files.size(), locks);
  std::vector<double> work;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (unit[i] == work.size()) work.push_back(0.0);
    work[unit[i]] += estimates[i];
  }
  std::vector<int> unit_shard(work.size(), 0);
  std::vector<double> load(static_cast<std::size_t>(total), 0.0);
  for (std::size_t u : longest_first(work)) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    unit_shard[u] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += work[u];
  }
  for (std::size_t i = 0; i < files.size(); ++i) shard[i] = unit_shard[unit[i]];
  return shard;
}

std::string shard_plan_fingerprint(const std::vector<TestFile>& files,
                                   const std::vector<int>& assignment) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ULL;
    }
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    mix(files[i].rel_path);
    mix(fmt::format("\t{}\n", i < assignment.size() ? assignment[i] : 0));
  }
  return fmt::format("{:016x}", h);
}

Schedule schedule_files(const std::vector<TestFile>& files,
                        const std::map<std::string, double>& recorded,
                        const std::optional<Shard>& shard, const FileLocks& locks,
                        const std::set<std::string>& first) {
  const std::vector<double> estimates = estimate_durations(files, recorded);
  Schedule s;
  if (!shard) {
    s.files = order_files(files, estimates, first);
    return s;
  }
  const std::vector<int> assignment = assign_shards(files, estimates, shard->total, locks);
  s.shard_plan = shard_plan_fingerprint(files, assignment);
  std::vector<TestFile> mine;
  std::vector<double> mine_estimates;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (assignment[i] != shard->index) continue;
    mine.push_back(files[i]);
    mine_estimates.push_back(estimates[i]);
  }
  s.files = order_files(mine, mine_estimates, first);
  return s;
}

}  // namespace devshim
