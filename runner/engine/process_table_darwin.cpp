#include <libproc.h>
#include <sys/proc.h>
#include <sys/sysctl.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "runner/engine/process_table.h"

namespace devshim::process_table {

namespace {
// proc_listallpids' answer; static: the watchdog allocates nothing. A system with more processes
// is read as far as this goes.
std::array<pid_t, 1U << 16U> g_pids{};
}  // namespace

std::optional<Stat> stat(pid_t pid) {
  proc_bsdinfo info{};
  if (::proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, &info, sizeof info) !=
      static_cast<int>(sizeof info)) {
    return std::nullopt;
  }
  const pid_t session = ::getsid(pid);
  return Stat{info.pbi_status == SZOMB, static_cast<pid_t>(info.pbi_pgid),
              session < 0 ? 0 : session};
}

void for_each_process(void (*visit)(pid_t pid, void* context), void* context) {
  const int n = ::proc_listallpids(g_pids.data(), static_cast<int>(g_pids.size() * sizeof(pid_t)));
  for (int i = 0; i < n && i < static_cast<int>(g_pids.size()); ++i) {
    if (g_pids[static_cast<std::size_t>(i)] > 0)
      visit(g_pids[static_cast<std::size_t>(i)], context);
  }
}

// KERN_PROCARGS2 answers: argc (an int), the executable's path, NUL padding, argc arguments, then
// the environment's entries, each ended by a NUL, and an empty string (or the end) after them.
std::size_t read_environ(pid_t pid, char* buf, std::size_t capacity) {
  std::array<int, 3> mib{CTL_KERN, KERN_PROCARGS2, static_cast<int>(pid)};
  std::size_t size = capacity;
  if (::sysctl(mib.data(), mib.size(), buf, &size, nullptr, 0) != 0 || size < sizeof(int)) {
    return 0;
  }
  int argc = 0;
  std::memcpy(&argc, buf, sizeof argc);
  std::size_t i = sizeof argc;
  while (i < size && buf[i] != '\0') ++i;  // the executable's path
  while (i < size && buf[i] == '\0') ++i;  // its padding
  for (int arg = 0; arg < argc && i < size; ++arg) {
    while (i < size && buf[i] != '\0') ++i;
    ++i;
  }
  std::size_t end = i;
  while (end < size && buf[end] != '\0') {  // entries until the empty one
    while (end < size && buf[end] != '\0') ++end;
    ++end;
  }
  if (end > size) end = size;
  if (i >= end) return 0;
  std::memmove(buf, buf + i, end - i);
  return end - i;
}

}  // namespace devshim::process_table
