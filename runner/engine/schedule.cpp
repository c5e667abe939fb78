#include "runner/engine/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <numeric>

#include "runner/base/error.h"

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

// Indexes of files by expected duration, longest first; equal ones keep their order.
std::vector<std::size_t> longest_first(const std::vector<double>& estimates) {
  std::vector<std::size_t> idx(estimates.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return estimates[a] > estimates[b]; });
  return idx;
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
                               const std::vector<double>& estimates, int total) {
  std::vector<int> shard(files.size(), 0);
  if (total <= 1) return shard;
  std::vector<double> load(static_cast<std::size_t>(total), 0.0);
  for (std::size_t i : longest_first(estimates)) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    shard[i] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += estimates[i];
  }
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
                        const std::optional<Shard>& shard, const std::set<std::string>& first) {
  const std::vector<double> estimates = estimate_durations(files, recorded);
  Schedule s;
  if (!shard) {
    s.files = order_files(files, estimates, first);
    return s;
  }
  const std::vector<int> assignment = assign_shards(files, estimates, shard->total);
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
