#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runner/engine/process_table.h"

namespace devshim::process_table {

std::optional<Stat> stat(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char line[1024];
  const ssize_t n = ::read(fd, line, sizeof line - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  line[n] = '\0';
  // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
  const char* close = std::strrchr(line, ')');
  if (close == nullptr) return std::nullopt;
  char state = '?';
  int ppid = 0;
  int pgrp = 0;
  int session = 0;
  if (std::sscanf(close + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) != 4) {
    return std::nullopt;
  }
  return Stat{state == 'Z', static_cast<pid_t>(pgrp), static_cast<pid_t>(session)};
}

void for_each_process(void (*visit)(pid_t pid, void* context), void* context) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return;
  while (const dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    visit(static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10)), context);
  }
  ::closedir(proc);
}

std::size_t read_environ(pid_t pid, char* buf, std::size_t capacity) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/environ", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t len = 0;
  for (ssize_t r = 0; len < capacity; len += static_cast<std::size_t>(r)) {
    r = ::read(fd, buf + len, capacity - len);
    if (r <= 0) break;
  }
  ::close(fd);
  return len;
}

}  // namespace devshim::process_table
