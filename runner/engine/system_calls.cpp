#include "runner/engine/system_calls.h"

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <csignal>

namespace devshim {

int open_pipe(std::array<int, 2>& fds, bool nonblocking) {
#if defined(__linux__)
  return ::pipe2(fds.data(), O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0));
#else
  if (::pipe(fds.data()) != 0) return -1;
  for (int fd : fds) {
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 ||
        (nonblocking && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)) {
      ::close(fds[0]);
      ::close(fds[1]);
      fds = {-1, -1};
      return -1;
    }
  }
  return 0;
#endif
}

void close_descriptors(unsigned first, unsigned last) {
  if (first > last) return;
#if defined(__linux__)
  ::close_range(first, last, 0);
#else
  // getdtablesize: the soft RLIMIT_NOFILE, a system call (async-signal-safe in practice).
  const int limit = ::getdtablesize();
  const unsigned end = limit > 0 && static_cast<unsigned>(limit) - 1 < last
                           ? static_cast<unsigned>(limit) - 1
                           : last;
  for (unsigned fd = first; fd <= end && fd <= static_cast<unsigned>(INT_MAX); ++fd) {
    ::close(static_cast<int>(fd));
  }
#endif
}

const char* signal_abbreviation(int signo) {
  switch (signo) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGCHLD:
      return "SIGCHLD";
    case SIGCONT:
      return "SIGCONT";
    case SIGSTOP:
      return "SIGSTOP";
    case SIGTSTP:
      return "SIGTSTP";
    case SIGTTIN:
      return "SIGTTIN";
    case SIGTTOU:
      return "SIGTTOU";
    case SIGURG:
      return "SIGURG";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGVTALRM:
      return "SIGVTALRM";
    case SIGPROF:
      return "SIGPROF";
    case SIGWINCH:
      return "SIGWINCH";
#if defined(SIGPOLL)
    case SIGPOLL:
      return "SIGPOLL";  // SIGIO's number, named as glibc names it
#else
    case SIGIO:
      return "SIGIO";
#endif
    case SIGSYS:
      return "SIGSYS";
#if defined(SIGSTKFLT)
    case SIGSTKFLT:
      return "SIGSTKFLT";
#endif
#if defined(SIGPWR)
    case SIGPWR:
      return "SIGPWR";
#endif
#if defined(SIGEMT)
    case SIGEMT:
      return "SIGEMT";
#endif
#if defined(SIGINFO) && (!defined(SIGPWR) || SIGINFO != SIGPWR)
    case SIGINFO:
      return "SIGINFO";
#endif
    default:
      return nullptr;
  }
}

}  // namespace devshim
