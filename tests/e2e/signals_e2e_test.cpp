// SIGINT, SIGTERM and SIGHUP at any moment of a run, and a closed stdout, with the real runner
// binary (docs/cli.md, "Ctrl-C, SIGTERM, SIGHUP"): each signal ends the run with 128 + its
// number, the run is interrupted in the database (or, before it was begun, not there at all),
// what finished is kept and no process is left behind; a SIGINT ignored on entry stays ignored
// at every moment; a second SIGINT forces the exit; a run whose output pipe closes completes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runner/results/sqlite.h"
#include "tests/e2e/e2e_fixture.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Whether pid has a handler installed for sig (/proc/PID/status, SigCgt).
bool catches(pid_t pid, int sig) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("SigCgt:")) {
      const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
      return ((mask >> (sig - 1)) & 1U) != 0;
    }
  }
  return false;
}

// The live processes whose environment holds `entry` (what the runner, and everything it
// starts, inherits from the test).
std::vector<pid_t> processes_with(const std::string& entry) {
  std::vector<pid_t> found;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    std::ifstream in(e.path() / "environ", std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string env = '\0' + text.str();
    if (env.find('\0' + entry + '\0') != std::string::npos && testing::process_alive(pid)) {
      found.push_back(pid);
    }
  }
  return found;
}

class SignalsE2E : public E2EFixture {
 protected:
  // The runs' statuses as stored: read without Store, which would mark a stale run interrupted.
  std::vector<std::string> run_statuses() const { return run_statuses(db()); }
  static std::vector<std::string> run_statuses(const fs::path& db) {
    std::vector<std::string> out;
    if (!fs::exists(db)) return out;
    sql::Database raw(db, sql::Access::kRead);
    sql::Statement s(raw, "SELECT status FROM runs ORDER BY id");
    while (s.step()) out.push_back(s.text(0));
    return out;
  }
  std::map<std::string, std::string> env_with(const std::string& preload_s,
                                              const std::string& sleep_s) const {
    auto e = env();
    e["E2E_PRELOAD_S"] = preload_s;
    e["E2E_SLEEP_S"] = sleep_s;
    return e;
  }
  // Starts the runner; with sigint_ignored as a shell's background job starts it.
  testing::Child start(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env, bool sigint_ignored,
                       const fs::path& output) {
    struct sigaction ignore {};
    struct sigaction before {};
    ignore.sa_handler = SIG_IGN;
    if (sigint_ignored) ::sigaction(SIGINT, &ignore, &before);
    testing::Child child = testing::spawn(argv, env, output);
    if (sigint_ignored) ::sigaction(SIGINT, &before, nullptr);
    return child;
  }
  // Nothing the run started is left: no process with the test's environment.
  void expect_nothing_left(const std::string& when) const { expect_nothing_left(pids(), when); }
  static void expect_nothing_left(const fs::path& pids, const std::string& when) {
    const std::string marker = "E2E_PID_DIR=" + pids.string();
    EXPECT_TRUE(testing::eventually([&] { return processes_with(marker).empty(); }, 10s))
        << when << ": processes left: " << processes_with(marker).size();
  }
  void reset() {
    fs::remove_all(out());
    fs::remove(db());
    fs::remove(db().string() + "-wal");
    fs::remove(db().string() + "-shm");
    for (const auto& e : fs::directory_iterator(pids())) fs::remove(e.path());
  }

  // The runner on the signals suite (slow preload, files sleeping 30 s), sent sig `delay`
  // after it started catching signals: it ends with 128 + sig, leaves no run "running" and no
  // process behind. Each call has a folder of its own (database, output, the pids of the
  // processes it starts), so that calls can run side by side.
  void signal_at(int sig, std::chrono::milliseconds delay) const {
    const std::string when =
        strsignal(sig) + std::string(" at +") + std::to_string(delay.count()) + " ms";
    const fs::path place =
        dir_ / ("signal-" + std::to_string(sig) + "-at-" + std::to_string(delay.count()));
    const fs::path place_pids = place / "pids";
    fs::create_directories(place_pids);
    auto e = env_with("1.5", "30");
    e["E2E_PID_DIR"] = place_pids.string();
    auto child =
        testing::spawn(runner_argv_in(place, "signals", {"-j", "2"}), e, place / "runner.out");
    ASSERT_TRUE(testing::eventually([&] { return catches(child.pid, sig); }, 30s)) << when;
    std::this_thread::sleep_for(delay);
    ::kill(child.pid, sig);
    const auto status = testing::wait_for(child, 60s);
    ASSERT_TRUE(status) << when << ": the runner did not stop";
    ASSERT_TRUE(WIFEXITED(*status)) << when << ": ended by signal " << WTERMSIG(*status) << "\n"
                                    << testing::read_file(place / "runner.out");
    EXPECT_EQ(WEXITSTATUS(*status), 128 + sig) << when << testing::read_file(place / "runner.out");
    for (const std::string& s : run_statuses(place / "results.db")) {
      EXPECT_EQ(s, "interrupted") << when;
    }
    expect_nothing_left(place_pids, when);
  }

  // signal_at every 100 ms over the first two seconds: suite loading, database, probes, the
  // zygote importing its preload (1.5 s), the first files starting from it. The runs mostly wait,
  // so kLanes threads run them side by side, each its share one after another; the moments are
  // dealt back and forth (0-6 to lanes 0-6, 7-13 to lanes 6-0, ...) so that every lane waits
  // about as long. (With SUITE_PYTHON the environment probe has no torch to import: a stage of
  // 0.1 s instead of 1.4 s, still met by the first moments; with torch the 21 runs' probes would
  // keep both cores busy for 20 s.)
  void signal_at_every_moment(int sig) const {
    constexpr int kLanes = 7;
    constexpr int kMoments = 21;  // 0, 100, ..., 2000 ms
    std::vector<std::jthread> lanes;
    for (int lane = 0; lane < kLanes; ++lane) {
      lanes.emplace_back([this, sig, lane] {
        for (int round = 0; round * kLanes < kMoments; ++round) {
          const int moment = round * kLanes + (round % 2 == 0 ? lane : kLanes - 1 - lane);
          if (moment < kMoments) signal_at(sig, std::chrono::milliseconds(100 * moment));
        }
      });
    }
  }
};

TEST_F(SignalsE2E, SigintAtEveryMomentOfAWarmStartEndsTheRunWith130) {
  signal_at_every_moment(SIGINT);
}

TEST_F(SignalsE2E, SigtermAtEveryMomentOfAWarmStartEndsTheRunWith143) {
  signal_at_every_moment(SIGTERM);
}

TEST_F(SignalsE2E, SighupAtEveryMomentOfAWarmStartEndsTheRunWith129) {
  signal_at_every_moment(SIGHUP);
}

// Started as a shell's background job (SIGINT ignored): SIGINT every 100 ms of the whole run
// changes nothing, whenever it comes; SIGTERM still interrupts.
TEST_F(SignalsE2E, ASigintIgnoredOnEntryStaysIgnoredAtEveryMoment) {
  auto child =
      start(runner_argv("signals", {"-j", "2"}), env_with("1", "1"), true, dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually([&] { return catches(child.pid, SIGTERM); }, 30s));
  std::optional<int> status;
  for (int sent = 0; !status && sent < 1200; ++sent) {  // 2 minutes at most
    ::kill(child.pid, SIGINT);
    std::this_thread::sleep_for(100ms);
    int raw = 0;
    if (::waitpid(child.pid, &raw, WNOHANG) == child.pid) status = raw;
  }
  if (!status) status = testing::wait_for(child, 1s);
  ASSERT_TRUE(status) << "still running after 2 minutes";
  ASSERT_TRUE(WIFEXITED(*status)) << testing::read_file(dir_ / "runner.out");
  EXPECT_EQ(WEXITSTATUS(*status), 0) << testing::read_file(dir_ / "runner.out");
  EXPECT_EQ(run_statuses(), std::vector<std::string>{"passed"});
  EXPECT_EQ(files_of_last_run().size(), 3U);
  for (const auto& [path, f] : files_of_last_run()) EXPECT_EQ(f.status, FileStatus::kPassed);
  expect_nothing_left("SIGINT ignored");

  reset();
  child =
      start(runner_argv("signals", {"-j", "2"}), env_with("1", "30"), true, dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually([&] { return testing::pids_in(pids()).size() == 2; }, 60s));
  ::kill(child.pid, SIGTERM);
  status = testing::wait_for(child, 60s);
  ASSERT_TRUE(status && WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 143);
  EXPECT_EQ(run_statuses(), std::vector<std::string>{"interrupted"});
  expect_nothing_left("SIGTERM with SIGINT ignored");
}

// A signal while the runner asks the interpreter for its version (before the run begins) is an
// interrupt: 143, not "is no Python interpreter" and the usage error's 2, which CI saw when a
// signal of the test above landed during that check.
TEST_F(SignalsE2E, ASignalDuringTheInterpreterCheckIsAnInterruptNotABadInterpreter) {
  const fs::path python = dir_ / "slow-python";
  const fs::path asked = dir_ / "asked";
  testing::write_file(python, "#!/bin/sh\ntouch '" + asked.string() + "'\nexec sleep 30\n");
  fs::permissions(python, fs::perms::owner_all);
  auto child = start({RUNNER_PATH, (kSuites / "signals").string(), "--db", db().string(), "--out",
                      out().string(), "--python", python.string()},
                     env_with("0", "0"), false, dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually([&] { return fs::exists(asked); }, 30s));
  ::kill(child.pid, SIGTERM);
  const auto status = testing::wait_for(child, 30s);
  const std::string output = testing::read_file(dir_ / "runner.out");
  ASSERT_TRUE(status && WIFEXITED(*status)) << output;
  EXPECT_EQ(WEXITSTATUS(*status), 143) << output;
  EXPECT_EQ(output.find("no Python interpreter"), std::string::npos) << output;
  EXPECT_NE(output.find("interrupted by SIGTERM before the run began"), std::string::npos)
      << output;
}

// The files ignore SIGTERM and the grace is long: the first SIGINT waits for it, the second
// kills them at once; the run is still recorded as interrupted.
TEST_F(SignalsE2E, ASecondSigintForcesTheExit) {
  auto e = env_with("0", "300");
  e["E2E_IGNORE_SIGTERM"] = "1";
  auto child = start(runner_argv("signals", {"-j", "2", "--kill-grace", "3000"}), e, false,
                     dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually([&] { return testing::pids_in(pids()).size() == 2; }, 60s));
  ::kill(child.pid, SIGINT);
  ASSERT_TRUE(testing::eventually(
      [&] {
        return testing::read_file(out() / "run.log").find("Interrupted by SIGINT") !=
               std::string::npos;
      },
      30s));
  ::kill(child.pid, SIGINT);
  const auto status = testing::wait_for(child, 60s);
  ASSERT_TRUE(status && WIFEXITED(*status)) << "the second SIGINT did not end the run";
  EXPECT_EQ(WEXITSTATUS(*status), 130);
  EXPECT_EQ(run_statuses(), std::vector<std::string>{"interrupted"});
  for (const auto& [path, f] : files_of_last_run()) {
    if (f.status) {
      EXPECT_EQ(*f.status, FileStatus::kInterrupted) << path;
    }
  }
  expect_nothing_left("second SIGINT");
}

// Each signal as the run finishes (its closing line written: gap log, reports, the last lines):
// either the run was over first (0, passed) or it is interrupted (128 + the signal); its
// results are kept either way.
TEST_F(SignalsE2E, ASignalWhileTheRunFinishesKeepsItsResults) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    reset();
    auto child =
        start(runner_argv("signals", {"-j", "2"}), env_with("0", "0"), false, dir_ / "runner.out");
    ASSERT_TRUE(testing::eventually(
        [&] {
          return testing::read_file(out() / "run.log").find(" passed: files:") != std::string::npos;
        },
        60s));
    ::kill(child.pid, sig);
    const auto status = testing::wait_for(child, 60s);
    ASSERT_TRUE(status && WIFEXITED(*status)) << strsignal(sig);
    const int code = WEXITSTATUS(*status);
    EXPECT_TRUE(code == 0 || code == 128 + sig) << strsignal(sig) << ": " << code;
    EXPECT_EQ(run_statuses(), std::vector<std::string>{code == 0 ? "passed" : "interrupted"});
    const auto files = files_of_last_run();
    EXPECT_EQ(files.size(), 3U);
    for (const auto& [path, f] : files) EXPECT_EQ(f.status, FileStatus::kPassed) << path;
    expect_nothing_left(strsignal(sig));
  }
}

// --differential: a signal once the shim run has begun planning ends it; the baseline run,
// complete, keeps its status.
TEST_F(SignalsE2E, ASigtermDuringADifferentialsSecondRunEndsIt) {
  auto e = env_with("0", "0");
  e["E2E_PRELOAD_S"] = "2";
  auto child =
      start(runner_argv("signals", {"-j", "2", "--differential"}), e, false, dir_ / "runner.out");
  ASSERT_TRUE(testing::eventually([&] { return fs::exists(out() / "run.log"); }, 120s));
  ::kill(child.pid, SIGTERM);
  const auto status = testing::wait_for(child, 60s);
  ASSERT_TRUE(status && WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 143) << testing::read_file(dir_ / "runner.out");
  const std::vector<std::string> statuses = run_statuses();
  ASSERT_GE(statuses.size(), 1U);
  EXPECT_EQ(statuses[0], "passed");  // the baseline
  if (statuses.size() > 1) {
    EXPECT_EQ(statuses[1], "interrupted");
  }
  expect_nothing_left("differential");
}

// `runner SUITE | head -1`: the pipe closes after the first line; the run goes on, records
// every file and writes its reports (what it cannot print is dropped; run.log has it all).
TEST_F(SignalsE2E, ARunWhoseOutputPipeClosesCompletesWithEveryResultAndReport) {
  std::array<int, 2> fds{};
  ASSERT_EQ(::pipe(fds.data()), 0);
  std::vector<std::string> args = runner_argv("signals", {"-j", "2"});
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) envs.emplace_back(*e);
  for (const auto& [k, v] : env_with("0", "0.5")) envs.push_back(k + "=" + v);
  std::vector<char*> argp;
  std::vector<char*> envp;
  for (auto& a : args) argp.push_back(a.data());
  for (auto& e : envs) envp.push_back(e.data());
  argp.push_back(nullptr);
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    ::signal(SIGPIPE, SIG_DFL);
    ::execve(argp[0], argp.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string first;
  char c = 0;
  while (::read(fds[0], &c, 1) == 1 && c != '\n') first += c;
  ::close(fds[0]);  // as `head -1` does
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status)
                                 << "; first line: " << first;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(run_statuses(), std::vector<std::string>{"passed"});
  const auto files = files_of_last_run();
  EXPECT_EQ(files.size(), 3U);
  for (const auto& [path, f] : files) EXPECT_EQ(f.status, FileStatus::kPassed) << path;
  for (const char* report : {"report.md", "report.json", "junit.xml", "report.html"}) {
    EXPECT_TRUE(fs::exists(out() / report)) << report;
  }
  const std::string log = testing::read_file(out() / "run.log");
  for (const char* file : {"test_a_sleeps.py", "test_b_sleeps.py", "test_c_sleeps.py"}) {
    EXPECT_NE(log.find(std::string("Finished test: ") + file), std::string::npos) << log;
  }
  expect_nothing_left("closed pipe");
}

}  // namespace
}  // namespace devshim
