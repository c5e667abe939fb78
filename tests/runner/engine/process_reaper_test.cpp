// ProcessReaper with real processes, on each process platform this build has (linux, posix):
// setsid daemons that leave a test's process group are killed once their file has finished, not
// before; a runner killed with SIGKILL leaves nothing behind. What only the linux platform does
// (a daemon that clears its environment is still found) is pinned for both.
#include "runner/engine/process_reaper.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <thread>

#include "runner/cli/process_environment.h"
#include "runner/engine/process_platform.h"
#include "runner/engine/process_pool.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
namespace fs = std::filesystem;

// Starts a daemon with setsid (a new session: out of the file's process group), writes its pid
// to $PIDS/<name>.pid, waits for it, then exits.
std::string daemon_script(const std::string& name) {
  return "setsid /bin/sh -c 'echo $$ > \"$PIDS/" + name + ".pid.tmp\"; mv \"$PIDS/" + name +
         ".pid.tmp\" \"$PIDS/" + name + ".pid\"; exec sleep 600' & while [ ! -s \"$PIDS/" + name +
         ".pid\" ]; do sleep 0.01; done";
}

class ProcessTest : public ::testing::Test {
 protected:
  ProcessSpec sh(const std::string& script, const std::string& name) const {
    ProcessSpec s;
    s.argv = {"/bin/sh", "-c", script};
    s.env = runner_environment();
    s.env["PIDS"] = dir_.path().string();
    s.cwd = dir_.path();
    s.log_path = dir_ / ("logs/" + name + ".log");
    return s;
  }
  pid_t pid_of(const std::string& name) const {
    return static_cast<pid_t>(std::stol(testing::read_file(dir_ / (name + ".pid"))));
  }
  TempDir dir_;
};

class Quiet : public PoolObserver {};

// The platform under test is the process's for the test's duration: the children it starts get
// its death signal (or none).
class ProcessReaperTest : public ProcessTest,
                          public ::testing::WithParamInterface<const ProcessPlatform*> {
 protected:
  void SetUp() override { select_process_platform(platform()); }
  void TearDown() override { select_process_platform(*before_); }
  const ProcessPlatform& platform() const { return *GetParam(); }
  void kill_runner_and_expect_nothing_left(const std::string& script, bool watched,
                                           const std::vector<std::string>& names);

 private:
  const ProcessPlatform* before_ = &process_platform();
};

std::vector<const ProcessPlatform*> built_platforms() {
  std::vector<const ProcessPlatform*> out;
  for (const char* name : {"linux", "posix"}) {
    if (const ProcessPlatform* p = process_platform_named(name)) out.push_back(p);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Platforms, ProcessReaperTest, ::testing::ValuesIn(built_platforms()),
                         [](const auto& info) { return std::string(info.param->name()); });

TEST_F(ProcessTest, WithoutAReaperASetsidDaemonOutlivesItsFile) {
  // Why the reaper exists: the process-group kill alone misses it.
  PoolOptions o;
  Quiet quiet;
  ASSERT_TRUE(ProcessPool(o).run({sh(daemon_script("d"), "d")}, quiet));
  const pid_t daemon = pid_of("d");
  EXPECT_FALSE(testing::eventually([&] { return !testing::process_alive(daemon); }, 500ms));
  ::kill(daemon, SIGKILL);
}

TEST_P(ProcessReaperTest, ADaemonDiesWhenItsFileFinishesNotBefore) {
  ProcessReaper reaper(platform());
  PoolOptions o;
  o.jobs = 2;
  o.children = &reaper;
  // File 0 starts a daemon and ends at once; file 1 starts one and keeps running until file 0's
  // daemon is gone, then checks that its own daemon still lives.
  const std::string second = daemon_script("d1") +
                             "; while [ ! -s \"$PIDS/d0.pid\" ]; do sleep 0.01; done"
                             "; while kill -0 $(cat \"$PIDS/d0.pid\") 2>/dev/null; do sleep 0.02; "
                             "done; kill -0 $(cat \"$PIDS/d1.pid\")";
  const std::string first =
      "while [ ! -s \"$PIDS/d1.pid\" ]; do sleep 0.01; done; " + daemon_script("d0");
  class Results : public PoolObserver {
   public:
    void on_finish(std::size_t i, const ProcessResult& r) override { exit_codes[i] = r.exit_code; }
    std::map<std::size_t, std::optional<int>> exit_codes;
  } results;
  ASSERT_TRUE(ProcessPool(o).run({sh(first, "f0"), sh(second, "f1")}, results));
  EXPECT_EQ(results.exit_codes.at(0), 0);
  EXPECT_EQ(results.exit_codes.at(1), 0) << "file 1's daemon was killed while file 1 ran";
  for (const char* name : {"d0", "d1"}) {
    const pid_t daemon = pid_of(name);
    EXPECT_TRUE(testing::eventually([&] { return !testing::process_alive(daemon); }, 3s))
        << name << " outlived its file";
  }
}

TEST_P(ProcessReaperTest,
       ADaemonWithAnEmptyEnvironmentLivesWhileItsFileRunsWhereOrphansAreAdopted) {
  // `env -i`: no cookie says whose it is. The intermediate shell exits at once, so the daemon is
  // adopted by the runner (the subreaper) while its file still runs for a second and more
  // sweeps; the file then checks it is alive. It must die once the file has ended. Without a
  // subreaper (posix) nothing tells it from any other process of the system: it escapes
  // (docs/reliability.md, "Process platforms").
  ProcessReaper reaper(platform());
  PoolOptions o;
  o.children = &reaper;
  o.tick = 50ms;
  const std::string file =
      "env -i PIDS=\"$PIDS\" /bin/sh -c 'setsid sleep 600 & echo $! > \"$PIDS/e.pid.tmp\"; "
      "mv \"$PIDS/e.pid.tmp\" \"$PIDS/e.pid\"'; sleep 1.5; kill -0 $(cat \"$PIDS/e.pid\")";
  class Results : public PoolObserver {
   public:
    void on_finish(std::size_t, const ProcessResult& r) override { exit_code = r.exit_code; }
    std::optional<int> exit_code;
  } results;
  ASSERT_TRUE(ProcessPool(o).run({sh(file, "f")}, results));
  EXPECT_EQ(results.exit_code, 0) << "the daemon was killed while its file ran";
  const pid_t daemon = pid_of("e");
  if (platform().adopts_orphans()) {
    EXPECT_TRUE(testing::eventually([&] { return !testing::process_alive(daemon); }, 3s))
        << "the daemon outlived its file";
  } else {
    EXPECT_FALSE(testing::eventually([&] { return !testing::process_alive(daemon); }, 1s))
        << "the posix platform found a daemon without a cookie: docs/reliability.md is wrong";
  }
  ::kill(daemon, SIGKILL);
}

TEST_P(ProcessReaperTest, AProcessTheRunnerIsStartingIsNotTakenForAnOrphan) {
  // The environment and device probes start from other threads while the pool sweeps. Between
  // fork and exec such a child is not yet the leader of its own group and carries no cookie:
  // a sweep then must not kill it (it did: "the interpreter could not run the probe").
  ProcessReaper reaper(platform());
  std::atomic<bool> done{false};
  std::atomic<int> failed{0};
  constexpr int kStarts = 150;
  std::thread starter([&] {
    for (int i = 0; i < kStarts; ++i) {
      if (!capture_output({"/bin/sh", "-c", "echo ok"}, dir_.path(), 30s, runner_environment()))
        ++failed;
    }
    done = true;
  });
  std::size_t sweeps = 0;
  while (!done) {
    reaper.sweep({});
    ++sweeps;
  }
  starter.join();
  EXPECT_EQ(failed, 0) << "of " << kStarts << " starts, during " << sweeps << " sweeps";
  EXPECT_GT(sweeps, 0U);
}

// A stand-in runner: a forked child that starts `script` as a file's group marked with its cookie
// (and watches it, or not yet), waits for the pid files `names`, then dies of SIGKILL without any
// cleanup of its own. Each named process must then die within 5 s.
void ProcessReaperTest::kill_runner_and_expect_nothing_left(const std::string& script, bool watched,
                                                            const std::vector<std::string>& names) {
  const auto written = [&] {
    return std::all_of(names.begin(), names.end(),
                       [&](const std::string& n) { return fs::exists(dir_ / (n + ".pid")); });
  };
  const pid_t runner = ::fork();
  ASSERT_GE(runner, 0);
  if (runner == 0) {
    ProcessReaper reaper(platform());
    const std::map<std::string, std::string> env{{kProcessCookieVar, reaper.cookie(0)},
                                                 {"PIDS", dir_.path().string()}};
    auto group = testing::spawn({"/bin/sh", "-c", script}, env, dir_ / "group.out");
    if (watched) reaper.watch(group.pid);
    testing::eventually(written, 10s);
    ::raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(runner, &status, 0), runner);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(written());
  for (const std::string& name : names) {
    const pid_t pid = pid_of(name);
    EXPECT_TRUE(testing::eventually([&] { return !testing::process_alive(pid); }, 5s))
        << name << " (" << pid << ") outlived the killed runner";
    ::kill(pid, SIGKILL);
  }
}

TEST_P(ProcessReaperTest, TheWatchdogCleansUpAfterARunnerKilledWithSigkill) {
  // A group and a setsid daemon, both marked with the cookie.
  kill_runner_and_expect_nothing_left(
      "sleep 600 & echo $! > \"$PIDS/g.pid\"; " + daemon_script("d") + "; wait", true, {"g", "d"});
}

// The instant between starting a file and watch(): the runner dies there, and what the file
// started (here, before the runner could watch it) dies too, found by the cookie.
TEST_P(ProcessReaperTest, AFileTheKilledRunnerHadNotYetWatchedLeavesNothingBehind) {
  kill_runner_and_expect_nothing_left("sleep 600 & echo $! > \"$PIDS/g.pid\"; wait", false, {"g"});
}

}  // namespace
}  // namespace devshim
