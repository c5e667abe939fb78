// The process platforms by name, the one the command line selects, and the process table they
// read (runner/engine/process_platform.h, process_table.h). What each platform does with real
// daemons: process_reaper_test.cpp.
#include "runner/engine/process_platform.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "base/error.h"
#include "runner/cli/process_environment.h"
#include "runner/engine/process_table.h"

namespace devshim {
namespace {

bool contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

TEST(ProcessPlatform, EveryBuildHasThePosixPlatformAndItAdoptsNoOrphans) {
  const ProcessPlatform* posix = process_platform_named("posix");
  ASSERT_NE(posix, nullptr);
  EXPECT_EQ(posix, &posix_platform());
  EXPECT_STREQ(posix->name(), "posix");
  EXPECT_FALSE(posix->adopts_orphans());
  EXPECT_EQ(process_platform_named("windows"), nullptr);
  EXPECT_EQ(process_platform_named(""), nullptr);
}

#if defined(DEVSHIM_PLATFORM_LINUX)
TEST(ProcessPlatform, TheLinuxPlatformIsTheDefaultWhereItIsBuilt) {
  EXPECT_STREQ(process_platform().name(), "linux");
  EXPECT_TRUE(linux_platform().adopts_orphans());
  EXPECT_EQ(process_platform_names(), "linux, posix");
}

TEST(ProcessPlatform, TheLinuxPlatformSweepsItsOwnChildren) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  const auto candidates = linux_platform().sweep_candidates();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(contains(candidates, child));
  EXPECT_FALSE(contains(candidates, ::getppid())) << "not a child of this process";
}
#endif

TEST(ProcessPlatform, ThePosixPlatformSweepsEveryProcess) {
  const auto candidates = posix_platform().sweep_candidates();
  EXPECT_TRUE(contains(candidates, ::getpid()));
  EXPECT_TRUE(contains(candidates, ::getppid()));
}

TEST(ProcessPlatform, TheCommandLineSelectsItFromTheEnvironment) {
  const ProcessPlatform& before = process_platform();
  apply_process_settings({{"DEVSHIM_PROCESS_PLATFORM", "posix"}});
  EXPECT_EQ(&process_platform(), &posix_platform());
  apply_process_settings({});  // unset: left as it is
  EXPECT_EQ(&process_platform(), &posix_platform());
  try {
    apply_process_settings({{"DEVSHIM_PROCESS_PLATFORM", "plan9"}});
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "DEVSHIM_PROCESS_PLATFORM: no process platform 'plan9' in this build (it has: " +
                  process_platform_names() + ")");
  }
  select_process_platform(before);
}

TEST(ProcessTable, ReadsThisProcesssGroupSessionAndEnvironment) {
  const auto stat = process_table::stat(::getpid());
  ASSERT_TRUE(stat);
  EXPECT_FALSE(stat->zombie);
  EXPECT_EQ(stat->pgrp, ::getpgrp());
  EXPECT_EQ(stat->session, ::getsid(0));

  ASSERT_EQ(::setenv("DEVSHIM_TABLE_TEST", "here", 1), 0);
  std::vector<char> env(1U << 20U);
  const std::size_t len = process_table::read_environ(::getpid(), env.data(), env.size());
  // /proc shows the environment the process started with; a child started now has the new one.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::execl("/bin/sleep", "sleep", "5", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::usleep(100'000);  // until it has exec'ed
  const std::size_t child_len = process_table::read_environ(child, env.data(), env.size());
  const char* entry = process_table::find_entry(env.data(), child_len, "DEVSHIM_TABLE_TEST=", 19);
  ASSERT_NE(entry, nullptr);
  EXPECT_STREQ(entry, "DEVSHIM_TABLE_TEST=here");
  EXPECT_EQ(process_table::find_entry(env.data(), child_len, "DEVSHIM_TABLE_TEST=x", 20), nullptr);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::unsetenv("DEVSHIM_TABLE_TEST");
  EXPECT_GT(len, 0U);
  EXPECT_FALSE(process_table::stat(child).has_value()) << "reaped: gone from the table";
}

TEST(ProcessTable, SaysAZombieIsOne) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  const auto stat = process_table::stat(child);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(stat);
  EXPECT_TRUE(stat->zombie);
}

}  // namespace
}  // namespace devshim
