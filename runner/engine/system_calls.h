// The few system calls that Linux has and other POSIX systems (macOS) spell otherwise, each behind
// one portable signature; system_calls.cpp picks per operating system at compile time.
#pragma once

#include <array>

namespace devshim {

/// pipe(2) with both ends close-on-exec (and non-blocking with `nonblocking`). Atomic where the
/// system has pipe2 (Linux); elsewhere the flags are set right after, so a child another thread
/// forks in that instant may inherit the ends (start_process closes every descriptor but its
/// child's three). Returns 0, or -1 with errno set.
int open_pipe(std::array<int, 2>& fds, bool nonblocking = false);

/// Closes every descriptor from first to last, both included (last is clipped to the process's
/// descriptor limit). Async-signal-safe: a child calls it between fork and exec.
void close_descriptors(unsigned first, unsigned last);

/// "SIGSEGV" for SIGSEGV, and so for every signal the system names in <csignal>; nullptr for a
/// number it does not name (real-time signals, unknown numbers).
const char* signal_abbreviation(int signo);

}  // namespace devshim
