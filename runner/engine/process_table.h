// Other processes as the operating system's process table shows them: /proc on Linux
// (process_table_linux.cpp), sysctl and libproc on macOS (process_table_darwin.cpp), one file per
// system chosen by the build. The process platforms (runner/engine/process_platform.h) and the
// reaper's watchdog read processes through it and nothing else does.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstring>
#include <optional>

namespace devshim::process_table {

/// What the process table says of one process.
struct Stat {
  bool zombie = false;  ///< it has exited and waits to be reaped
  pid_t pgrp = 0;       ///< its process group
  pid_t session = 0;    ///< its session
};

/// pid's state, group and session; nullopt when it is gone or cannot be read.
std::optional<Stat> stat(pid_t pid);

/// Calls visit(pid, context) for each process of the system (zombies included). Plain C calls
/// only, no C++ library state: the watchdog, a forked copy of the runner, calls it.
void for_each_process(void (*visit)(pid_t pid, void* context), void* context);

/// pid's environment into buf: its "NAME=value" entries, each ended by a NUL, at most capacity
/// bytes (the rest is cut). Returns the bytes written; 0 when it cannot be read (gone, another
/// user's, a kernel thread). Plain C calls only (the watchdog calls it).
std::size_t read_environ(pid_t pid, char* buf, std::size_t capacity);

/// The entry of env (read_environ's bytes) that starts with prefix, or nullptr; the entry ends at
/// the next NUL or at env + len.
inline const char* find_entry(const char* env, std::size_t len, const char* prefix,
                              std::size_t prefix_len) {
  for (std::size_t i = 0; i + prefix_len <= len;) {
    if (std::memcmp(env + i, prefix, prefix_len) == 0) return env + i;
    const void* nul = std::memchr(env + i, '\0', len - i);
    if (nul == nullptr) break;
    i = static_cast<std::size_t>(static_cast<const char*>(nul) - env) + 1;
  }
  return nullptr;
}

}  // namespace devshim::process_table
