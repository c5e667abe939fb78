#include "runner/engine/interrupt.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>

#include "runner/engine/process_pool.h"
#include "runner/engine/system_calls.h"

namespace devshim {

namespace {

std::atomic<int> first_signal{0};
std::atomic<int> signal_count{0};
std::atomic<bool> pool_handles{false};
std::array<int, 2> wake_pipe{-1, -1};  // [0]: interrupt_fd(), [1]: written by the handler

extern "C" void on_signal(int signo) {
  const int saved_errno = errno;
  int expected = 0;
  first_signal.compare_exchange_strong(expected, signo);
  const int n = signal_count.fetch_add(1) + 1;
  if (n >= 2 && !pool_handles.load()) ::_exit(exit_code_of_signal(first_signal.load()));
  const char byte = 1;
  [[maybe_unused]] const ssize_t w = ::write(wake_pipe[1], &byte, 1);  // full: still readable
  errno = saved_errno;
}

}  // namespace

void catch_interrupts() {
  if (wake_pipe[0] >= 0) return;
  if (open_pipe(wake_pipe, /*nonblocking=*/true) != 0) {
    throw RuntimeError("cannot create the pipe that signals are reported on");
  }
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, nullptr);
  struct sigaction handler {};
  handler.sa_handler = on_signal;
  handler.sa_flags = SA_RESTART;
  sigfillset(&handler.sa_mask);  // a macro on macOS: no ::
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // ignored on entry: stays ignored
    ::sigaction(sig, &handler, nullptr);
  }
}

int interrupt_signal() { return first_signal.load(); }

int interrupt_count() { return signal_count.load(); }

int interrupt_fd() { return wake_pipe[0]; }

void set_pool_handles_signals(bool on) { pool_handles.store(on); }

void forget_interrupts() {
  first_signal.store(0);
  signal_count.store(0);
  std::array<char, 64> drained{};
  while (wake_pipe[0] >= 0 && ::read(wake_pipe[0], drained.data(), drained.size()) > 0) {
  }
}

Interrupted::Interrupted(int signo)
    : Error("interrupted by " + signal_name(signo) + " before the run began: nothing recorded",
            exit_code_of_signal(signo)),
      signal_(signo) {}

void throw_if_interrupted() {
  if (const int signo = interrupt_signal(); signo != 0) throw Interrupted(signo);
}

}  // namespace devshim
