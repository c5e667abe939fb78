#include "runner/engine/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "base/error.h"

namespace devshim {
namespace {

std::vector<TestFile> files_named(const std::vector<std::string>& names) {
  std::vector<TestFile> out;
  for (const auto& n : names) out.push_back(TestFile{n, "/t/" + n});
  return out;
}

std::vector<std::string> names(const std::vector<TestFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.rel_path);
  return out;
}

TEST(ResolveShard, TheOptionIsOneBasedAndWinsOverTheEnvironment) {
  auto s = resolve_shard("2/4", 0, {{"TEST_TOTAL_SHARDS", "3"}, {"TEST_SHARD_INDEX", "0"}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 1);
  EXPECT_EQ(s->total, 4);
  EXPECT_EQ(shard_text(*s), "2/4");
  EXPECT_FALSE(resolve_shard("1/1", 0, {})) << "one shard of one is no shard";
  EXPECT_FALSE(resolve_shard("", 0, {}));
  for (const char* bad : {"0/4", "5/4", "2", "a/b", "2/", "/4", "-1/4", "2/4x"}) {
    EXPECT_THROW(resolve_shard(bad, 0, {}), UsageError) << bad;
  }
}

TEST(ResolveShard, BazelVariablesAreZeroBased) {
  auto s = resolve_shard("", 0, {{"TEST_TOTAL_SHARDS", "3"}, {"TEST_SHARD_INDEX", "2"}});
  ASSERT_TRUE(s);
  EXPECT_EQ(shard_text(*s), "3/3");
  EXPECT_THROW(resolve_shard("", 0, {{"TEST_TOTAL_SHARDS", "3"}, {"TEST_SHARD_INDEX", "3"}}),
               UsageError);
  EXPECT_THROW(resolve_shard("", 0, {{"TEST_TOTAL_SHARDS", "3"}}), UsageError);
}

TEST(ResolveShard, KubernetesIndexNeedsATotal) {
  EXPECT_EQ(shard_text(*resolve_shard("", 4, {{"JOB_COMPLETION_INDEX", "0"}})), "1/4");
  EXPECT_EQ(shard_text(*resolve_shard(
                "", 0, {{"JOB_COMPLETION_INDEX", "3"}, {"DEVSHIM_SHARD_TOTAL", "4"}})),
            "4/4");
  EXPECT_EQ(shard_text(*resolve_shard(
                "", 2, {{"JOB_COMPLETION_INDEX", "1"}, {"DEVSHIM_SHARD_TOTAL", "4"}})),
            "2/2")
      << "--shard-total wins over the variable";
  EXPECT_THROW(resolve_shard("", 0, {{"JOB_COMPLETION_INDEX", "1"}}), UsageError);
  EXPECT_THROW(resolve_shard("", 2, {{"JOB_COMPLETION_INDEX", "2"}}), UsageError);
  EXPECT_FALSE(resolve_shard("", 4, {})) << "--shard-total alone shards nothing";
}

TEST(EstimateDurations, FilesWithoutHistoryGetTheMedian) {
  auto files = files_named({"a", "b", "c", "d", "e"});
  auto est = estimate_durations(files, {{"a", 1.0}, {"b", 10.0}, {"c", 3.0}, {"zz", 99.0}});
  EXPECT_EQ(est, (std::vector<double>{1.0, 10.0, 3.0, 3.0, 3.0}));
  auto even = estimate_durations(files, {{"a", 2.0}, {"b", 4.0}});
  EXPECT_EQ(even[4], 3.0);
  EXPECT_EQ(estimate_durations(files, {}), std::vector<double>(5, 1.0));
}

TEST(OrderFiles, LongestFirstStableAndFailedFirst) {
  auto files = files_named({"a", "b", "c", "d"});
  std::vector<double> est{1, 5, 1, 3};
  EXPECT_EQ(names(order_files(files, est)), (std::vector<std::string>{"b", "d", "a", "c"}));
  EXPECT_EQ(names(order_files(files, est, {"c", "d"})),
            (std::vector<std::string>{"d", "c", "b", "a"}));
  EXPECT_EQ(names(order_files(files, std::vector<double>(4, 1.0))), names(files))
      << "no history: discovery order";
}

TEST(AssignShards, BalancesExpectedWorkDeterministically) {
  std::vector<std::string> n;
  std::vector<double> est;
  for (int i = 0; i < 40; ++i) {
    n.push_back("test_" + std::to_string(i));
    est.push_back(0.1 + (i % 7) * (i % 5) * 0.3);
  }
  auto files = files_named(n);
  auto a = assign_shards(files, est, 4);
  EXPECT_EQ(a, assign_shards(files, est, 4));
  std::vector<double> load(4, 0);
  for (std::size_t i = 0; i < a.size(); ++i) load[a[i]] += est[i];
  const double total = std::accumulate(est.begin(), est.end(), 0.0);
  const double longest = *std::max_element(est.begin(), est.end());
  for (double l : load) EXPECT_LE(l, total / 4 + longest) << "greedy bound";
  EXPECT_EQ(assign_shards(files_named({"a", "b", "c"}), {1, 1, 1}, 2), (std::vector<int>{0, 1, 0}))
      << "equal estimates: round robin in discovery order";
}

TEST(AssignShards, FilesHoldingOneLockShareAShard) {
  auto files = files_named({"a", "b", "c", "d"});
  EXPECT_EQ(assign_shards(files, {1, 1, 1, 1}, 2), (std::vector<int>{0, 1, 0, 1}))
      << "balancing alone puts a and b apart";
  EXPECT_EQ(assign_shards(files, {1, 1, 1, 1}, 2, {{"port"}, {"port"}, {}, {}}),
            (std::vector<int>{0, 0, 1, 1}));
}

TEST(AssignShards, LocksJoinFilesTransitively) {
  // a and c share X, c and e share Y: a, c and e are one unit, though a and e share nothing.
  auto files = files_named({"a", "b", "c", "d", "e", "f"});
  EXPECT_EQ(
      assign_shards(files, std::vector<double>(6, 1.0), 3, {{"X"}, {}, {"X", "Y"}, {}, {"Y"}, {}}),
      (std::vector<int>{0, 1, 0, 2, 0, 1}));
}

TEST(AssignShards, AUnitIsPlacedByTheSumOfItsFiles) {
  // The unit {a, b} weighs 4: it goes before c and d (3 each), though each of its files is shorter.
  auto files = files_named({"a", "b", "c", "d", "e"});
  EXPECT_EQ(assign_shards(files, {2, 2, 3, 3, 1}, 2, {{"port"}, {"port"}}),
            (std::vector<int>{0, 0, 1, 1, 0}));
}

TEST(AssignShards, AUnitHeavierThanAFairShareStaysWhole) {
  // The lock outranks the balance: one shard carries the unit of 4, the others a file each.
  auto files = files_named({"a", "b", "c", "d", "e", "f"});
  std::vector<int> a = assign_shards(files, std::vector<double>(6, 1.0), 3,
                                     {{"scratch"}, {"scratch"}, {"scratch"}, {"scratch"}});
  EXPECT_EQ(a, (std::vector<int>{0, 0, 0, 0, 1, 2}));
}

TEST(AssignShards, WithoutSharedLocksEachFileIsPlacedAsBefore) {
  std::vector<std::string> n;
  std::vector<double> est;
  FileLocks alone;
  for (int i = 0; i < 40; ++i) {
    n.push_back("test_" + std::to_string(i));
    est.push_back(0.1 + (i % 7) * (i % 5) * 0.3);
    alone.push_back({"lock_" + std::to_string(i)});
  }
  auto files = files_named(n);
  const std::vector<int> plain = assign_shards(files, est, 4);
  EXPECT_EQ(assign_shards(files, est, 4, FileLocks(40)), plain);
  EXPECT_EQ(assign_shards(files, est, 4, alone), plain) << "a lock held by one file joins nothing";
}

TEST(ScheduleFiles, TheHoldersOfALockRunInOneShardOfOnePlan) {
  auto files = files_named({"a", "b", "c", "d", "e", "f", "g"});
  std::map<std::string, double> recorded{{"a", 5}, {"c", 2}, {"g", 9}};
  const FileLocks locks{{"port"}, {}, {}, {}, {}, {}, {"port"}};
  std::string plan;
  int holding = 0;
  for (int i = 0; i < 3; ++i) {
    Schedule s = schedule_files(files, recorded, Shard{i, 3}, locks);
    if (i == 0) plan = s.shard_plan;
    EXPECT_EQ(s.shard_plan, plan);
    const std::vector<std::string> mine = names(s.files);
    const bool a = std::count(mine.begin(), mine.end(), "a") > 0;
    const bool g = std::count(mine.begin(), mine.end(), "g") > 0;
    EXPECT_EQ(a, g) << "shard " << i;
    holding += a ? 1 : 0;
  }
  EXPECT_EQ(holding, 1);
  EXPECT_NE(schedule_files(files, recorded, Shard{0, 3}).shard_plan, plan)
      << "the plan without the lock puts a and g apart";
}

TEST(ScheduleFiles, ShardsCoverEveryFileOnceWithOnePlan) {
  auto files = files_named({"a", "b", "c", "d", "e", "f", "g"});
  std::map<std::string, double> recorded{{"a", 5}, {"c", 2}, {"g", 9}};
  std::set<std::string> seen;
  std::string plan;
  for (int i = 0; i < 3; ++i) {
    Schedule s = schedule_files(files, recorded, Shard{i, 3});
    if (i == 0) plan = s.shard_plan;
    EXPECT_EQ(s.shard_plan, plan);
    EXPECT_EQ(s.shard_plan.size(), 16U);
    for (const auto& f : s.files) EXPECT_TRUE(seen.insert(f.rel_path).second) << f.rel_path;
  }
  EXPECT_EQ(seen.size(), files.size());
  EXPECT_NE(schedule_files(files, {}, Shard{0, 3}).shard_plan, plan)
      << "another history, another plan";
  Schedule all = schedule_files(files, recorded, std::nullopt);
  EXPECT_TRUE(all.shard_plan.empty());
  EXPECT_EQ(all.files.front().rel_path, "g");
}

}  // namespace
}  // namespace devshim
