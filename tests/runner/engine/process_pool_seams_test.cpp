// ProcessPool against fakes of its two seams (runner/engine/process_seams.h): a ChildTracker that
// records what the pool tells it, and a WarmParent that starts when the test says and spawns the
// children it is asked to fork. The real ones are tested with the pool in process_reaper_test.cpp
// and tests/e2e/warm_e2e_test.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "base/error.h"
#include "runner/cli/process_environment.h"
#include "runner/engine/process_pool.h"
#include "runner/engine/process_seams.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

class FakeTracker final : public ChildTracker {
 public:
  std::string cookie(std::size_t index) const override { return "fake:" + std::to_string(index); }
  void watch(pid_t pgid) override { watched.push_back(pgid); }
  void forget(pid_t pgid) override { forgotten.push_back(pgid); }
  std::size_t sweep(const std::vector<std::size_t>& running_files) override {
    sweeps.push_back(running_files);
    return 0;
  }
  std::vector<pid_t> watched;
  std::vector<pid_t> forgotten;
  std::vector<std::vector<std::size_t>> sweeps;
};

// Starting until its reply pipe holds a byte (the test writes it), then kReady, or kFailed when
// fail_with is set. fork_child spawns the child itself, in its own group, or throws when refuse
// is set.
class FakeWarmParent final : public WarmParent {
 public:
  FakeWarmParent() {
    if (::pipe2(pipe_.data(), O_NONBLOCK) != 0) throw RuntimeError("pipe2");
  }
  ~FakeWarmParent() override {
    ::close(pipe_[0]);
    ::close(pipe_[1]);
  }
  FakeWarmParent(const FakeWarmParent&) = delete;
  FakeWarmParent& operator=(const FakeWarmParent&) = delete;

  /// Makes the next poll_ready see news.
  void becomes_ready() { (void)::write(pipe_[1], "r", 1); }

  State poll_ready() override {
    ++polls;
    char byte = 0;
    if (state_ == State::kStarting && ::read(pipe_[0], &byte, 1) == 1) {
      state_ = fail_with.empty() ? State::kReady : State::kFailed;
    }
    return state_;
  }
  State state() const override { return state_; }
  const std::string& why() const override { return fail_with; }
  int reply_fd() const override { return pipe_[0]; }
  std::chrono::steady_clock::time_point deadline() const override {
    return std::chrono::steady_clock::now() + 60s;
  }
  pid_t fork_child(const ChildStart& start, const std::filesystem::path& log_path) override {
    forked.push_back(start.args.back());
    if (!refuse.empty()) throw RuntimeError(refuse);
    std::vector<std::string> argv{start.executable};
    argv.insert(argv.end(), start.args.begin(), start.args.end());
    std::map<std::string, std::string> env;
    for (const std::string& kv : start.env) {
      const auto eq = kv.find('=');
      env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    return testing::spawn(argv, env, log_path, start.cwd).pid;
  }
  WarmReady ready() const override { return {4242, {"torch", "pytest"}, 1.5}; }

  std::string fail_with;            ///< poll_ready turns kFailed with this why
  std::string refuse;               ///< fork_child throws this
  std::vector<std::string> forked;  ///< the script of each child it was asked for
  int polls = 0;

 private:
  std::array<int, 2> pipe_{-1, -1};
  State state_ = State::kStarting;
};

class Recorder final : public PoolObserver {
 public:
  void on_start(std::size_t i) override { starts.push_back(i); }
  void on_finish(std::size_t i, const ProcessResult& r) override { results[i] = r; }
  void on_cold_start(std::size_t i, const std::string& why) override { cold[i] = why; }
  void on_warm_start(const std::optional<WarmReady>& r, const std::string& why) override {
    ++warm_starts;
    ready = r;
    warm_why = why;
  }
  std::vector<std::size_t> starts;
  std::map<std::size_t, ProcessResult> results;
  std::map<std::size_t, std::string> cold;
  int warm_starts = 0;
  std::optional<WarmReady> ready;
  std::string warm_why;
};

class PoolSeamsTest : public ::testing::Test {
 protected:
  ProcessSpec sh(const std::string& script, const std::string& name) {
    ProcessSpec s;
    s.argv = {"/bin/sh", "-c", script};
    s.env = runner_environment();
    s.cwd = dir_.path();
    s.log_path = dir_ / ("logs/" + name + ".log");
    return s;
  }
  TempDir dir_;
};

TEST_F(PoolSeamsTest, EachChildCarriesItsCookieAndItsGroupIsWatchedThenForgotten) {
  std::vector<ProcessSpec> specs{sh("echo \"$DEVSHIM_PROCESS_COOKIE\"", "a"),
                                 sh("echo \"$DEVSHIM_PROCESS_COOKIE\"", "b")};
  FakeTracker tracker;
  PoolOptions o;
  o.jobs = 1;
  o.children = &tracker;
  Recorder rec;
  ASSERT_TRUE(ProcessPool(o).run(specs, rec));
  EXPECT_EQ(testing::read_file(specs[0].log_path), "fake:0\n");
  EXPECT_EQ(testing::read_file(specs[1].log_path), "fake:1\n");
  ASSERT_EQ(tracker.watched.size(), 2U);
  EXPECT_EQ(tracker.forgotten, tracker.watched) << "every group forgotten once it ended";
  EXPECT_NE(tracker.watched[0], tracker.watched[1]);
  // A sweep after each file (none running then, with -j 1) and at the end.
  ASSERT_GE(tracker.sweeps.size(), 3U);
  for (const auto& running : tracker.sweeps) EXPECT_TRUE(running.empty());
}

TEST_F(PoolSeamsTest, FilesThatWaitForTheWarmParentForkFromItOthersStartColdMeanwhile) {
  // b waits (it imports what the parent preloads) and c after it; a starts cold at once.
  std::vector<ProcessSpec> specs{sh("exit 0", "a"), sh("exit 3", "b"), sh("exit 0", "c")};
  specs[1].waits_for_warm = true;
  FakeWarmParent parent;
  PoolOptions o;
  o.jobs = 2;
  o.warm_parent = &parent;
  Recorder rec;
  // a is started (and finishes) before the parent is ready: the test says so from on_start.
  struct ReadyAfterA final : public PoolObserver {
    Recorder& rec;
    FakeWarmParent& parent;
    ReadyAfterA(Recorder& r, FakeWarmParent& p) : rec(r), parent(p) {}
    void on_start(std::size_t i) override { rec.on_start(i); }
    void on_finish(std::size_t i, const ProcessResult& r) override {
      rec.on_finish(i, r);
      if (i == 0) parent.becomes_ready();
    }
    void on_cold_start(std::size_t i, const std::string& why) override {
      rec.on_cold_start(i, why);
    }
    void on_warm_start(const std::optional<WarmReady>& r, const std::string& why) override {
      rec.on_warm_start(r, why);
    }
  } observer(rec, parent);
  ASSERT_TRUE(ProcessPool(o).run(specs, observer));
  EXPECT_EQ(rec.starts, (std::vector<std::size_t>{0, 1, 2}));
  ASSERT_EQ(rec.results.size(), 3U);
  EXPECT_FALSE(rec.results[0].warm) << "started while the parent was starting";
  EXPECT_TRUE(rec.results[1].warm);
  EXPECT_TRUE(rec.results[2].warm);
  EXPECT_EQ(rec.results[1].exit_code, 3) << "the forked child is waited for like any other";
  EXPECT_EQ(parent.forked, (std::vector<std::string>{"exit 3", "exit 0"}));
  ASSERT_EQ(rec.warm_starts, 1);
  ASSERT_TRUE(rec.ready.has_value());
  EXPECT_EQ(rec.ready->pid, 4242);
  EXPECT_EQ(rec.ready->preloaded, (std::vector<std::string>{"torch", "pytest"}));
  EXPECT_TRUE(rec.cold.empty());
}

TEST_F(PoolSeamsTest, AChildTheWarmParentCannotForkStartsColdAndSaysWhy) {
  std::vector<ProcessSpec> specs{sh("exit 0", "a")};
  FakeWarmParent parent;
  parent.refuse = "not a python -m command";
  parent.becomes_ready();
  PoolOptions o;
  o.warm_parent = &parent;
  Recorder rec;
  ASSERT_TRUE(ProcessPool(o).run(specs, rec));
  EXPECT_EQ(rec.cold.at(0), "not a python -m command");
  EXPECT_FALSE(rec.results.at(0).warm);
  EXPECT_EQ(rec.results.at(0).exit_code, 0);
}

TEST_F(PoolSeamsTest, AWarmParentThatFailsLeavesEveryFileColdAndTheWaitingOnesStartToo) {
  std::vector<ProcessSpec> specs{sh("exit 0", "a"), sh("exit 0", "b")};
  specs[0].waits_for_warm = true;
  specs[1].waits_for_warm = true;
  FakeWarmParent parent;
  parent.fail_with = "import torch failed";
  parent.becomes_ready();
  PoolOptions o;
  o.jobs = 2;
  o.warm_parent = &parent;
  Recorder rec;
  ASSERT_TRUE(ProcessPool(o).run(specs, rec));
  ASSERT_EQ(rec.results.size(), 2U);
  for (const auto& [i, r] : rec.results) {
    EXPECT_FALSE(r.warm) << i;
    EXPECT_EQ(r.exit_code, 0) << i;
  }
  EXPECT_TRUE(parent.forked.empty());
  ASSERT_EQ(rec.warm_starts, 1);
  EXPECT_FALSE(rec.ready.has_value());
  EXPECT_EQ(rec.warm_why, "import torch failed");
}

}  // namespace
}  // namespace devshim
