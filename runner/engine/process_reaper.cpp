#include "runner/engine/process_reaper.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include "base/error.h"

namespace devshim {

namespace {

// ---- The watchdog (a forked copy of the runner; plain system calls, no C++ library state). ----

constexpr std::size_t kMaxGroups = 4096;
std::array<pid_t, kMaxGroups> g_groups{};
std::array<char, 1U << 20U> g_environ{};  // one process's environment (the first MiB of it)

bool read_exact(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// True when /proc/<pid>/environ holds needle ("VAR=value-prefix") at the start of an entry.
bool environ_has(const char* pid, const char* needle, std::size_t needle_len) {
  char path[300];  // "/proc/" + a d_name of up to 255 bytes + "/environ"
  std::snprintf(path, sizeof path, "/proc/%s/environ", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::size_t len = 0;
  for (ssize_t r = 0; len < g_environ.size(); len += static_cast<std::size_t>(r)) {
    r = ::read(fd, g_environ.data() + len, g_environ.size() - len);
    if (r <= 0) break;
  }
  ::close(fd);
  for (std::size_t i = 0; i + needle_len <= len;) {
    if (std::memcmp(g_environ.data() + i, needle, needle_len) == 0) return true;
    const void* nul = std::memchr(g_environ.data() + i, '\0', len - i);
    if (nul == nullptr) break;
    i = static_cast<std::size_t>(static_cast<const char*>(nul) - g_environ.data()) + 1;
  }
  return false;
}

// SIGKILL to every process (but this one) whose environment carries needle; returns how many.
int kill_marked(const char* needle) {
  const std::size_t needle_len = std::strlen(needle);
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  int killed = 0;
  const pid_t self = ::getpid();
  while (dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    const pid_t pid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
    if (pid == self || !environ_has(e->d_name, needle, needle_len)) continue;
    if (::kill(pid, SIGKILL) == 0) ++killed;
  }
  ::closedir(proc);
  return killed;
}

[[noreturn]] void watchdog_main(int fd, const char* needle) {
  ::setsid();  // out of the runner's group: a signal to that group leaves it to clean up
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) ::sigaction(sig, &ignore, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int null = ::open("/dev/null", O_RDWR);
  for (int std_fd = 0; std_fd < 3 && null >= 0; ++std_fd) ::dup2(null, std_fd);
  if (fd > 3) ::close_range(3, static_cast<unsigned>(fd) - 1, 0);
  ::close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);

  std::size_t n = 0;
  std::int32_t msg = 0;
  while (read_exact(fd, &msg, sizeof msg)) {
    if (msg > 0 && n < kMaxGroups) {
      g_groups[n++] = msg;
    } else if (msg < 0) {
      for (std::size_t i = 0; i < n; ++i) {
        if (g_groups[i] == -msg) {
          g_groups[i] = g_groups[--n];
          break;
        }
      }
    }
  }
  // The pipe closed: the runner exited. Whatever it still watched is left over.
  for (std::size_t i = 0; i < n; ++i) ::kill(-g_groups[i], SIGKILL);
  if (n > 0) {
    // Processes that left their group: by the cookie; again while some were found (forks).
    for (int round = 0; round < 5 && kill_marked(needle) > 0; ++round) ::usleep(50'000);
  }
  ::_exit(0);
}

// ---- The runner's side. ----

struct ProcStat {
  char state = '?';
  pid_t pgrp = 0;
  pid_t session = 0;
};

std::optional<ProcStat> proc_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  ProcStat s;
  pid_t ppid = 0;
  if (!(rest >> s.state >> ppid >> s.pgrp >> s.session)) return std::nullopt;
  return s;
}

std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t pid = 0; in >> pid;) out.push_back(pid);
  }
  return out;
}

// The file index of our cookie in pid's environment, if it carries it.
std::optional<std::size_t> cookie_index(pid_t pid, const std::string& prefix) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  for (std::string entry; std::getline(in, entry, '\0');) {
    if (entry.compare(0, prefix.size(), prefix) != 0) continue;
    std::size_t index = 0;
    const char* first = entry.data() + prefix.size();
    auto [end, ec] = std::from_chars(first, entry.data() + entry.size(), index);
    if (ec == std::errc() && end != first) return index;
  }
  return std::nullopt;
}

}  // namespace

ProcessReaper::ProcessReaper() {
  std::random_device random;
  cookie_ = fmt::format("{}-{:08x}", ::getpid(), random());
  // The needle is built before the fork: the watchdog allocates nothing.
  const std::string needle = fmt::format("{}={}:", kProcessCookieVar, cookie_);
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    throw RuntimeError(fmt::format("cannot create the watchdog's pipe: {}", std::strerror(errno)));
  }
  watchdog_ = ::fork();
  if (watchdog_ < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw RuntimeError(fmt::format("cannot fork the watchdog: {}", std::strerror(err)));
  }
  if (watchdog_ == 0) watchdog_main(fds[0], needle.c_str());
  ::close(fds[0]);
  pipe_ = fds[1];
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

ProcessReaper::~ProcessReaper() {
  ::close(pipe_);
  int status = 0;
  while (::waitpid(watchdog_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::string ProcessReaper::cookie(std::size_t index) const {
  return fmt::format("{}:{}", cookie_, index);
}

void ProcessReaper::watch(pid_t pgid) {
  watched_.insert(pgid);
  const std::int32_t msg = pgid;
  [[maybe_unused]] auto n = ::write(pipe_, &msg, sizeof msg);  // atomic: < PIPE_BUF
}

void ProcessReaper::forget(pid_t pgid) {
  watched_.erase(pgid);
  const std::int32_t msg = -pgid;
  [[maybe_unused]] auto n = ::write(pipe_, &msg, sizeof msg);
}

namespace {
std::shared_mutex& process_start_mutex() {
  static std::shared_mutex m;
  return m;
}
}  // namespace

std::shared_lock<std::shared_mutex> starting_a_process() {
  return std::shared_lock(process_start_mutex());
}

std::size_t ProcessReaper::sweep(const std::vector<std::size_t>& running_files) {
  const auto running = [&](std::size_t index) {
    return std::find(running_files.begin(), running_files.end(), index) != running_files.end();
  };
  std::map<pid_t, std::vector<std::size_t>> still_unknown;
  const std::unique_lock no_process_half_started(process_start_mutex());
  const pid_t my_session = ::getsid(0);
  const pid_t my_group = ::getpgrp();
  const std::string prefix = std::string(kProcessCookieVar) + "=" + cookie_ + ":";
  std::size_t killed = 0;
  for (pid_t child : own_children()) {
    if (child == watchdog_) continue;
    const auto stat = proc_stat(child);
    if (!stat) continue;
    // A group leader of our session is a process this runner started (a test file's, a probe's):
    // its owner waits for it. Anything else is an adopted orphan.
    const bool own_leader = stat->pgrp == child && stat->session == my_session;
    if (stat->state == 'Z') {
      if (!own_leader) ::waitpid(child, nullptr, WNOHANG);
      continue;
    }
    if (watched_.count(stat->pgrp) > 0) continue;  // a running file's: dies with its group
    const auto index = cookie_index(child, prefix);
    if (index ? running(*index) : own_leader) continue;
    if (!index) {
      // No cookie: it cleared its environment. It came from a file running when it was first
      // seen, so it lives while one of those does.
      auto known = unknown_.find(child);
      std::vector<std::size_t> suspects = known != unknown_.end() ? known->second : running_files;
      if (std::any_of(suspects.begin(), suspects.end(), running)) {
        still_unknown.emplace(child, std::move(suspects));
        continue;
      }
    }
    if (stat->pgrp > 1 && stat->pgrp != my_group) ::kill(-stat->pgrp, SIGKILL);
    if (::kill(child, SIGKILL) == 0) ++killed;
    dying_.push_back(child);
  }
  unknown_ = std::move(still_unknown);  // forgets those gone, so a reused pid starts afresh
  std::erase_if(dying_, [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) != 0; });
  return killed + dying_.size();
}

}  // namespace devshim
