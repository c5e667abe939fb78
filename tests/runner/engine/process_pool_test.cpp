// ProcessPool with real processes (/bin/sh scripts): parallelism, exit codes and signals,
// timeouts that kill whole groups, log truncation, interruption.
#include "runner/engine/process_pool.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <map>

#include "runner/cli/process_environment.h"
#include "runner/engine/interrupt.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

class Recorder : public PoolObserver {
 public:
  void on_start(std::size_t i) override {
    starts.push_back(i);
    ++running;
    max_running = std::max(max_running, running);
    if (on_start_hook) on_start_hook(i);
  }
  void on_finish(std::size_t i, const ProcessResult& r) override {
    --running;
    results[i] = r;
  }
  std::vector<std::size_t> starts;
  std::map<std::size_t, ProcessResult> results;
  int running = 0;
  int max_running = 0;
  std::function<void(std::size_t)> on_start_hook;
};

class ProcessPoolTest : public ::testing::Test {
 protected:
  ProcessSpec sh(const std::string& script, const std::string& name) {
    ProcessSpec s;
    s.argv = {"/bin/sh", "-c", script};
    s.env = runner_environment();
    s.env["PIDS"] = dir_.path().string();
    s.cwd = dir_.path();
    s.log_path = dir_ / ("logs/" + name + ".log");
    return s;
  }
  TempDir dir_;
};

TEST_F(ProcessPoolTest, RunsEverySpecInOrderWithAtMostJobsAtOnce) {
  std::vector<ProcessSpec> specs;
  for (int i = 0; i < 5; ++i) specs.push_back(sh("sleep 0.2", "s" + std::to_string(i)));
  PoolOptions o;
  o.jobs = 2;
  Recorder rec;
  EXPECT_TRUE(ProcessPool(o).run(specs, rec));
  EXPECT_EQ(rec.starts, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(rec.max_running, 2);
  ASSERT_EQ(rec.results.size(), 5U);
  for (const auto& [i, r] : rec.results) EXPECT_EQ(r.exit_code, 0) << i;
}

TEST_F(ProcessPoolTest, FilesHoldingOneLockNeverOverlapAndTheOthersRunBesideThem) {
  // Each "port" file takes the port (mkdir is atomic): a second one at the same time exits 3.
  const std::string takes_port = "mkdir \"$PIDS/port\" || exit 3; sleep 0.4; rmdir \"$PIDS/port\"";
  std::vector<ProcessSpec> specs{sh(takes_port, "a"), sh(takes_port, "b"), sh("sleep 0.1", "c"),
                                 sh(takes_port, "d")};
  for (std::size_t i : {0, 1, 3}) specs[i].locks = {"port 29505"};
  PoolOptions o;
  o.jobs = 2;
  Recorder rec;
  EXPECT_TRUE(ProcessPool(o).run(specs, rec));
  ASSERT_EQ(rec.results.size(), 4U);
  for (const auto& [i, r] : rec.results) EXPECT_EQ(r.exit_code, 0) << i;
  // b waits for a's lock, and c, which holds none, starts in its place.
  EXPECT_EQ(rec.starts, (std::vector<std::size_t>{0, 2, 1, 3}));
  EXPECT_EQ(rec.max_running, 2);
}

TEST_F(ProcessPoolTest, TellsExitCodesFromSignals) {
  std::vector<ProcessSpec> specs{sh("exit 9", "exit9"), sh("kill -9 $$", "kill9"),
                                 sh("kill -SEGV $$", "segv"), sh("echo out; echo err >&2", "ok")};
  Recorder rec;
  EXPECT_TRUE(ProcessPool(PoolOptions{}).run(specs, rec));
  EXPECT_EQ(rec.results[0].exit_code, 9);
  EXPECT_FALSE(rec.results[0].signal);
  EXPECT_EQ(rec.results[1].signal, SIGKILL);
  EXPECT_FALSE(rec.results[1].exit_code);
  EXPECT_FALSE(rec.results[1].timed_out);
  EXPECT_EQ(rec.results[2].signal, SIGSEGV);
  EXPECT_EQ(testing::read_file(specs[3].log_path), "out\nerr\n");
}

TEST_F(ProcessPoolTest, RunsInItsOwnGroupWithStdinFromDevNull) {
  // `cat` ends at once on /dev/null; the group id equals the child's pid.
  std::vector<ProcessSpec> specs{sh("cat; cut -d' ' -f5 /proc/$$/stat; echo $$", "grp")};
  Recorder rec;
  ASSERT_TRUE(ProcessPool(PoolOptions{}).run(specs, rec));
  std::string out = testing::read_file(specs[0].log_path);
  auto nl = out.find('\n');
  ASSERT_NE(nl, std::string::npos) << out;
  EXPECT_EQ(out.substr(0, nl), out.substr(nl + 1, out.size() - nl - 2)) << out;
  EXPECT_NE(out.substr(0, nl), std::to_string(::getpgrp()));
}

TEST_F(ProcessPoolTest, TruncatesAnOldLog) {
  testing::write_file(dir_ / "logs/t.log", std::string(10000, 'x'));
  std::vector<ProcessSpec> specs{sh("echo fresh", "t")};
  Recorder rec;
  ASSERT_TRUE(ProcessPool(PoolOptions{}).run(specs, rec));
  EXPECT_EQ(testing::read_file(dir_ / "logs/t.log"), "fresh\n");
}

TEST_F(ProcessPoolTest, TimeoutKillsTheWholeGroupEvenWhenSigtermIsIgnored) {
  // The child and its grandchild ignore SIGTERM; only the SIGKILL after the grace ends them.
  std::vector<ProcessSpec> specs{
      sh("trap '' TERM; sleep 30 & echo $! > \"$PIDS/grandchild.pid\"; wait", "hang")};
  PoolOptions o;
  o.timeout = 300ms;
  o.kill_grace = 300ms;
  Recorder rec;
  ASSERT_TRUE(ProcessPool(o).run(specs, rec));
  const ProcessResult& r = rec.results[0];
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_GE(r.duration_s, 0.3);
  EXPECT_LT(r.duration_s, 0.3 + 0.3 + 2.0);
  auto pids = testing::pids_in(dir_.path());
  ASSERT_EQ(pids.size(), 1U);
  EXPECT_TRUE(testing::eventually([&] { return !testing::process_alive(pids[0]); }, 2s));
}

TEST_F(ProcessPoolTest, GrandchildrenLeftBehindByAFinishedFileAreKilled) {
  std::vector<ProcessSpec> specs{sh("sleep 30 & echo $! > \"$PIDS/left.pid\"; exit 0", "left")};
  Recorder rec;
  ASSERT_TRUE(ProcessPool(PoolOptions{}).run(specs, rec));
  EXPECT_EQ(rec.results[0].exit_code, 0);
  auto pids = testing::pids_in(dir_.path());
  ASSERT_EQ(pids.size(), 1U);
  EXPECT_TRUE(testing::eventually([&] { return !testing::process_alive(pids[0]); }, 2s));
}

TEST_F(ProcessPoolTest, ALogPastItsLimitStopsItsProcessAndIsCutThere) {
  std::vector<ProcessSpec> specs{sh("yes flood", "flood")};
  PoolOptions o;
  o.max_log_bytes = 1 << 20;
  o.timeout = 20s;
  Recorder rec;
  ASSERT_TRUE(ProcessPool(o).run(specs, rec));
  EXPECT_TRUE(rec.results[0].log_too_big);
  EXPECT_EQ(rec.results[0].signal, SIGKILL);
  EXPECT_FALSE(rec.results[0].timed_out) << "killed when its log passed the limit, not later";
  EXPECT_EQ(std::filesystem::file_size(specs[0].log_path), 1U << 20);
}

// One that wrote past the limit between two checks and exited keeps its exit, not its bytes.
TEST_F(ProcessPoolTest, ALogThatPassedItsLimitBeforeTheProcessExitedIsCutToo) {
  std::vector<ProcessSpec> specs{sh("head -c 3000000 /dev/zero; exit 0", "burst")};
  PoolOptions o;
  o.max_log_bytes = 1 << 20;
  o.log_check = 1h;  // never while it runs
  Recorder rec;
  ASSERT_TRUE(ProcessPool(o).run(specs, rec));
  EXPECT_TRUE(rec.results[0].log_too_big);
  EXPECT_EQ(rec.results[0].exit_code, 0);
  EXPECT_EQ(std::filesystem::file_size(specs[0].log_path), 1U << 20);
}

// Only the log is limited: a test may write a checkpoint larger than the limit, as under plain
// pytest (stable-baselines3 saves a 2.4 GB model).
TEST_F(ProcessPoolTest, FilesOtherThanTheLogMayGrowPastTheLimit) {
  std::vector<ProcessSpec> specs{
      sh("head -c 3000000 /dev/zero > \"$PIDS/model.bin\" && echo saved", "checkpoint")};
  PoolOptions o;
  o.max_log_bytes = 1 << 20;
  Recorder rec;
  ASSERT_TRUE(ProcessPool(o).run(specs, rec));
  EXPECT_EQ(rec.results[0].exit_code, 0);
  EXPECT_FALSE(rec.results[0].log_too_big);
  EXPECT_EQ(std::filesystem::file_size(dir_ / "model.bin"), 3000000U);
}

TEST_F(ProcessPoolTest, AMissingInterpreterIsALaunchErrorNotACrash) {
  ProcessSpec s = sh("", "missing");
  s.argv = {"/nonexistent/python", "-V"};
  Recorder rec;
  ASSERT_TRUE(ProcessPool(PoolOptions{}).run({s}, rec));
  EXPECT_EQ(rec.results[0].launch_error,
            "cannot start /nonexistent/python: No such file or directory");
}

TEST_F(ProcessPoolTest, InterruptStopsLaunchingAndKillsRunningGroups) {
  std::vector<ProcessSpec> specs{sh("sleep 30 & echo $! > \"$PIDS/a.pid\"; wait", "a"),
                                 sh("sleep 30", "b")};
  PoolOptions o;
  o.jobs = 1;
  o.kill_grace = 200ms;
  Recorder rec;
  rec.on_start_hook = [](std::size_t i) {
    if (i == 0) ::kill(::getpid(), SIGINT);
  };
  catch_interrupts();  // the runner's handlers (runner/engine/interrupt.h), as in a run
  EXPECT_FALSE(ProcessPool(o).run(specs, rec));
  EXPECT_EQ(interrupt_signal(), SIGINT);
  // Once interrupted, a later batch (the reruns) starts nothing.
  Recorder later;
  EXPECT_FALSE(ProcessPool(o).run(specs, later));
  EXPECT_TRUE(later.starts.empty());
  forget_interrupts();
  ASSERT_EQ(rec.results.size(), 1U);
  EXPECT_TRUE(rec.results[0].interrupted);
  EXPECT_EQ(rec.starts, std::vector<std::size_t>{0});
  for (pid_t pid : testing::pids_in(dir_.path())) {
    EXPECT_TRUE(testing::eventually([&] { return !testing::process_alive(pid); }, 2s));
  }
}

TEST(CaptureOutput, ReturnsStdoutOfASuccessfulCommand) {
  EXPECT_EQ(capture_output({"sh", "-c", "echo hello"}, "/", 5s, runner_environment()), "hello\n");
  EXPECT_FALSE(capture_output({"sh", "-c", "exit 3"}, "/", 5s, runner_environment()));
  EXPECT_FALSE(capture_output({"no-such-command-xyz"}, "/", 5s, runner_environment()));
  EXPECT_FALSE(capture_output({"sleep", "10"}, "/", 200ms, runner_environment()));
}

TEST(SignalName, NamesKnownSignals) {
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(SIGXFSZ), "SIGXFSZ");
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(99), "signal 99");
  EXPECT_EQ(signal_name(0), "signal 0");
}

}  // namespace
}  // namespace devshim
