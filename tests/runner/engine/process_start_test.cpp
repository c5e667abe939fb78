// start_process with real processes: what the child inherits, what runs between fork and exec,
// and what a failed exec leaves behind.
#include "runner/engine/process_start.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/execution_context.hpp>
#include <boost/system/system_error.hpp>
#include <cstdio>
#include <fstream>
#include <set>

#include "runner/cli/process_environment.h"
#include "runner/engine/launch_plan.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using testing::TempDir;

std::vector<std::string> environment() {
  std::vector<std::string> out;
  for (const auto& [k, v] : runner_environment()) out.push_back(k + "=" + v);
  return out;
}

int wait_exit_code(boost::process::v2::process& proc) {
  proc.wait();
  const int status = proc.native_exit_code();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

std::set<pid_t> children() {
  std::set<pid_t> out;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t pid = 0; in >> pid;) out.insert(pid);
  }
  return out;
}

// An asio service whose fork hook ends the child at once: a child that runs the parent's asio
// fork hooks (notify_fork, which allocates and locks) exits 99 instead of running its program.
class ForkTrap : public asio::execution_context::service {
 public:
  using key_type = ForkTrap;
  static inline asio::execution_context::id id;
  explicit ForkTrap(asio::execution_context& ctx) : service(ctx) {}
  void notify_fork(asio::execution_context::fork_event event) override {
    if (event == asio::execution_context::fork_child) ::_exit(99);
  }

 private:
  void shutdown() override {}
};

TEST(StartProcess, TheChildRunsNothingOfTheRunnersAsioBetweenForkAndExec) {
  // Another thread may hold a lock that those hooks take (seen: ASan's allocator lock in the
  // sanitizer build): the child then hangs before exec, and its starter with it.
  asio::io_context ctx;
  asio::make_service<ForkTrap>(ctx);
  auto proc = start_process(ctx, {"/bin/sh", {"-c", "exit 7"}, "/", environment()});
  EXPECT_EQ(wait_exit_code(proc), 7);
}

TEST(StartProcess, AFailedExecIsAnErrorThatLeavesNeitherAZombieNorOutputTwice) {
  TempDir dir;
  // Buffered in the runner, not yet written: a child that leaves with exit() writes its copy.
  FILE* buffered = std::fopen((dir / "buffered").c_str(), "w");
  ASSERT_NE(buffered, nullptr);
  std::fputs("once\n", buffered);
  const std::set<pid_t> before = children();
  asio::io_context ctx;
  try {
    start_process(ctx, {(dir / "no-such-program").string(), {}, "/", environment()});
    ADD_FAILURE() << "a missing program started";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOENT) << e.what();
  }
  const std::set<pid_t> after = children();
  EXPECT_EQ(after, before) << "the failed child was not reaped";
  for (pid_t pid : after) {
    if (before.count(pid) == 0) ::waitpid(pid, nullptr, 0);  // until it is done
  }
  std::fclose(buffered);
  EXPECT_EQ(testing::read_file(dir / "buffered"), "once\n");
}

TEST(StartProcess, TheChildGetsItsStreamsDirectoryAndEnvironmentAndNoOtherDescriptor) {
  TempDir dir;
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC: inherited unless closed
  ASSERT_GE(leaked, 3);
  const int out = ::open((dir / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = ::open((dir / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  asio::io_context ctx;
  auto proc = start_process(
      ctx, {"/bin/sh",
            {"-c",
             "pwd; echo \"$GREETING\"; "
             "for fd in $(seq 3 99); do [ -e /proc/$$/fd/$fd ] && printf '%s ' $fd; done; "
             "echo end; read line && echo \"stdin: $line\"; echo oops >&2; "
             "echo group $(cut -d' ' -f5 /proc/$$/stat) pid $$"},
            dir.path(),
            {"PATH=/usr/bin:/bin", "GREETING=hello"},
            out,
            err});
  EXPECT_EQ(wait_exit_code(proc), 0);
  ::close(leaked);
  ::close(out);
  ::close(err);
  std::istringstream lines(testing::read_file(dir / "out"));
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(fs::path(line), fs::canonical(dir.path()));
  std::getline(lines, line);
  EXPECT_EQ(line, "hello");
  std::getline(lines, line);
  EXPECT_EQ(line, "end") << "descriptors of the runner reached the child (" << leaked << ")";
  std::getline(lines, line);  // no "stdin: ..." line: `read` found end of file (/dev/null)
  EXPECT_EQ(line.rfind("stdin:", 0), std::string::npos) << line;
  std::istringstream ids(line);
  std::string word;
  pid_t group = 0;
  pid_t pid = -1;
  ids >> word >> group >> word >> pid;
  EXPECT_EQ(group, pid) << "the child does not lead its own process group: " << line;
  EXPECT_EQ(testing::read_file(dir / "err"), "oops\n");
}

}  // namespace
}  // namespace devshim
