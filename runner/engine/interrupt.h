// How a run hears SIGINT, SIGTERM and SIGHUP, at every moment of it (docs/cli.md, "Ctrl-C,
// SIGTERM, SIGHUP"): one set of handlers for the whole run, installed before anything else, that
// only record the signal and make a pipe readable; each step of the run looks at that record
// where it can stop (ProcessPool waits on the pipe). Only the runner's run command installs
// them: the other commands keep the default dispositions.
#pragma once

#include <string>

#include "base/error.h"

namespace devshim {

/// Installs the handlers of SIGINT, SIGTERM and SIGHUP, except for a signal ignored on entry
/// (a shell's background job ignores SIGINT, nohup SIGHUP): that one stays ignored for the
/// whole run, so the runner's answer to a signal never depends on when it comes. Ignores
/// SIGPIPE: a closed stdout or stderr then fails writes (dropped) instead of ending the run.
/// A second signal while no ProcessPool is running ends the process at once with 128 + the
/// first signal (nothing more is recorded; the next runner marks the run interrupted); inside
/// a pool it kills the running groups at once. Call once, before any thread starts; again: no-op.
void catch_interrupts();

/// The first signal caught since catch_interrupts (0: none).
int interrupt_signal();
/// How many signals were caught.
int interrupt_count();
/// A descriptor that is readable from the first signal caught on (read it dry to wait for the
/// next one); -1 before catch_interrupts.
int interrupt_fd();
/// While a pool runs, a second signal is the pool's to handle; otherwise it ends the process.
void set_pool_handles_signals(bool on);

/// Forgets the signals caught (tests that interrupt a pool more than once in one process).
void forget_interrupts();

/// 128 + signo: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.
inline int exit_code_of_signal(int signo) { return 128 + signo; }

/// A signal stopped the runner before a run was begun in the database: nothing is recorded.
class Interrupted : public Error {
 public:
  explicit Interrupted(int signo);
  int signal() const { return signal_; }

 private:
  int signal_;
};

/// Throws Interrupted when a signal was caught.
void throw_if_interrupted();

}  // namespace devshim
