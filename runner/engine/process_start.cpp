#include "runner/engine/process_start.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/posix/default_launcher.hpp>
#include <boost/process/v2/start_dir.hpp>
#include <boost/process/v2/stdio.hpp>
#include <boost/system/system_error.hpp>
#include <boost/version.hpp>
#include <cerrno>
#include <climits>
#include <csignal>

#include "runner/engine/process_platform.h"
#include "runner/engine/process_reaper.h"
#include "runner/engine/system_calls.h"

// Boost.Process v2 in 1.81 needs its environment implementation compiled in exactly one TU.
#include <boost/process/v2/impl/environment.ipp>

namespace devshim {

namespace bp2 = boost::process::v2;
using boost::system::error_code;

namespace {

error_code last_error() { return {errno, boost::system::system_category()}; }

// The launcher's initializer hooks (stdio, start_dir, environment) are called through Boost.Process
// v2's private namespace, one wrapper each: the only calls into it. Their signatures are those of
// posix/default_launcher.hpp from 1.81 (this project's Debian package) to the newest release
// read before raising the bound below; another version must be read again before the bound moves.
static_assert(BOOST_VERSION >= 108100 && BOOST_VERSION < 109000,
              "Boost.Process v2's launcher hooks (boost::process::v2::posix::detail::on_*) were "
              "checked for Boost 1.81 to 1.89: read posix/default_launcher.hpp of this version, "
              "then move the bound");
namespace hooks {
template <typename Launcher, typename... Inits>
error_code setup(Launcher& l, const bp2::filesystem::path& exe, const char* const*& argv,
                 Inits&... inits) {
  return bp2::posix::detail::on_setup(l, exe, argv, inits...);
}
template <typename Launcher, typename... Inits>
void error(Launcher& l, const bp2::filesystem::path& exe, const char* const*& argv,
           const error_code& ec, Inits&... inits) {
  bp2::posix::detail::on_error(l, exe, argv, ec, inits...);
}
template <typename Launcher, typename... Inits>
void fork_error(Launcher& l, const bp2::filesystem::path& exe, const char* const*& argv,
                const error_code& ec, Inits&... inits) {
  bp2::posix::detail::on_fork_error(l, exe, argv, ec, inits...);
}
template <typename Launcher, typename... Inits>
void success(Launcher& l, const bp2::filesystem::path& exe, const char* const*& argv,
             Inits&... inits) {
  bp2::posix::detail::on_success(l, exe, argv, inits...);
}
template <typename Launcher, typename... Inits>
error_code exec_setup(Launcher& l, const bp2::filesystem::path& exe, const char* const*& argv,
                      Inits&... inits) {
  return bp2::posix::detail::on_exec_setup(l, exe, argv, inits...);
}
}  // namespace hooks

[[noreturn]] void throw_error(error_code ec, const char* what) {
  throw boost::system::system_error(ec, what);
}

// The child's own settings; runs in the child between fork and exec, after the standard streams
// are in place (async-signal-safe calls only).
struct ChildSetup {
  const ProcessPlatform* platform;  ///< read in the parent: the child calls die_with_parent

  template <typename Launcher, typename CmdLine>
  error_code on_exec_setup(Launcher& /*launcher*/, const bp2::filesystem::path& /*exe*/,
                           CmdLine& /*cmd_line*/) const {
    if (::setpgid(0, 0) != 0) return last_error();
    platform->die_with_parent();
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGCHLD}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // dup2 onto itself keeps FD_CLOEXEC (a runner started with a standard stream closed opens
    // its log there): the three must survive exec.
    for (int fd = 0; fd < 3; ++fd) ::fcntl(fd, F_SETFD, 0);
    return {};
  }
};

// Boost.Process v2's posix::default_launcher without what makes it unsafe in a multi-threaded
// parent (process_start.h): its initializer hooks (stdio, start_dir, environment) and its data
// are reused, its fork and exec are not.
class ForkSafeLauncher : public bp2::posix::default_launcher {
 public:
  template <typename... Inits>
  pid_t launch(const bp2::filesystem::path& exe, const std::vector<std::string>& args,
               Inits&&... inits) {
    const char* const* argv = build_argv_(exe, args);
    // The child's errno when exec fails; exec closes the write end, which the parent reads as
    // success. O_CLOEXEC from the start: a child forked by another thread must not hold it.
    std::array<int, 2> pipe{-1, -1};
    if (open_pipe(pipe) != 0) throw_error(last_error(), "pipe");
    struct Closer {
      std::array<int, 2>& fds;
      ~Closer() {
        for (int fd : fds) {
          if (fd >= 0) ::close(fd);
        }
      }
    } closer{pipe};

    if (error_code ec = hooks::setup(*this, exe, argv, inits...)) {
      hooks::error(*this, exe, argv, ec, inits...);
      throw_error(ec, "setup");
    }
    fd_whitelist.push_back(pipe[1]);
    std::sort(fd_whitelist.begin(), fd_whitelist.end());

    pid = ::fork();
    if (pid < 0) {
      const error_code ec = last_error();
      hooks::fork_error(*this, exe, argv, ec, inits...);
      hooks::error(*this, exe, argv, ec, inits...);
      throw_error(ec, "fork");
    }
    if (pid == 0) exec_child(pipe, exe, argv, inits...);

    ::close(pipe[1]);
    pipe[1] = -1;
    int child_errno = 0;
    ssize_t n = -1;
    while ((n = ::read(pipe[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
    }
    if (n != 0) {
      const error_code ec =
          n < 0 ? last_error() : error_code{child_errno, boost::system::system_category()};
      // Exec failed and the child is leaving (or the pipe failed: no way to know, so it goes):
      // reap it here, nobody else knows it.
      if (n < 0) ::kill(pid, SIGKILL);
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      hooks::error(*this, exe, argv, ec, inits...);
      throw_error(ec, "exec");
    }
    hooks::success(*this, exe, argv, inits...);
    return pid;
  }

 private:
  // In the child: the initializers' exec setup (dup2, chdir, ChildSetup), every descriptor but
  // the whitelisted ones closed, exec. System calls only: no allocation, no lock.
  template <typename... Inits>
  [[noreturn]] void exec_child(const std::array<int, 2>& pipe, const bp2::filesystem::path& exe,
                               const char* const*& argv, Inits&&... inits) {
    ::close(pipe[0]);
    error_code ec = hooks::exec_setup(*this, exe, argv, inits...);
    if (!ec) {
      unsigned first = 0;
      for (int keep : fd_whitelist) {
        const auto k = static_cast<unsigned>(keep);
        if (k > first) close_descriptors(first, k - 1);
        first = k + 1;
      }
      close_descriptors(first, UINT_MAX);
      ::execve(exe.c_str(), const_cast<char* const*>(argv), const_cast<char* const*>(env));
      ec = last_error();
    }
    const int code = ec.value();
    [[maybe_unused]] const auto written = ::write(pipe[1], &code, sizeof code);
    ::_exit(127);
  }
};

}  // namespace

bp2::process start_process(boost::asio::io_context& ctx, const ChildStart& start) {
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) throw_error(last_error(), "open /dev/null");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } null_closer{null_fd};
  const int in = start.stdin_fd >= 0 ? start.stdin_fd : null_fd;
  const int out = start.stdout_fd >= 0 ? start.stdout_fd : null_fd;
  const int err = start.stderr_fd >= 0 ? start.stderr_fd : null_fd;

  ForkSafeLauncher launcher;
  const auto starting = starting_a_process();
  const pid_t pid =
      launcher.launch(start.executable, start.args, bp2::process_stdio{in, out, err},
                      bp2::process_start_dir{start.cwd.string()},
                      bp2::process_environment{start.env}, ChildSetup{&process_platform()});
  ::setpgid(pid, pid);  // also done in the child; whichever runs first wins
  return bp2::process(ctx.get_executor(), pid);
}

}  // namespace devshim
