#include "runner/engine/process_reaper.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <random>

#include "base/error.h"
#include "runner/engine/process_table.h"
#include "runner/engine/system_calls.h"

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

struct Needle {
  const char* text;
  std::size_t len;
  pid_t self;
  int killed;
};

// SIGKILL to every process (but this one) whose environment carries needle; returns how many.
int kill_marked(const char* needle) {
  Needle n{needle, std::strlen(needle), ::getpid(), 0};
  process_table::for_each_process(
      [](pid_t pid, void* context) {
        auto& n = *static_cast<Needle*>(context);
        if (pid == n.self) return;
        const std::size_t len =
            process_table::read_environ(pid, g_environ.data(), g_environ.size());
        if (process_table::find_entry(g_environ.data(), len, n.text, n.len) == nullptr) return;
        if (::kill(pid, SIGKILL) == 0) ++n.killed;
      },
      &n);
  return n.killed;
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
  if (fd > 3) close_descriptors(3, static_cast<unsigned>(fd) - 1);
  close_descriptors(static_cast<unsigned>(fd) + 1, ~0U);

  std::size_t n = 0;
  bool exiting = false;  // the runner said it exits (0): it did not die
  std::int32_t msg = 0;
  while (read_exact(fd, &msg, sizeof msg)) {
    if (msg == 0) {
      exiting = true;
    } else if (msg > 0 && n < kMaxGroups) {
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
  if (n > 0 || !exiting) {
    // Processes that left their group, and, when the runner died, those of a file it had started
    // but not yet watched (its children may already run): by the cookie; again while some were
    // found (forks).
    for (int round = 0; round < 5 && kill_marked(needle) > 0; ++round) ::usleep(50'000);
  }
  ::_exit(0);
}

// ---- The runner's side. ----

// The file index of our cookie in pid's environment (read into buf), if it carries it.
std::optional<std::size_t> cookie_index(pid_t pid, const std::string& prefix,
                                        std::vector<char>& buf) {
  const std::size_t len = process_table::read_environ(pid, buf.data(), buf.size());
  const char* entry = process_table::find_entry(buf.data(), len, prefix.data(), prefix.size());
  if (entry == nullptr) return std::nullopt;
  const char* first = entry + prefix.size();
  const char* last = static_cast<const char*>(std::memchr(first, '\0', buf.data() + len - first));
  std::size_t index = 0;
  auto [end, ec] = std::from_chars(first, last != nullptr ? last : buf.data() + len, index);
  if (ec == std::errc() && end != first) return index;
  return std::nullopt;
}

}  // namespace

ProcessReaper::ProcessReaper() : ProcessReaper(process_platform()) {}

ProcessReaper::ProcessReaper(const ProcessPlatform& platform)
    : platform_(platform), environ_(g_environ.size()) {
  std::random_device random;
  cookie_ = fmt::format("{}-{:08x}", ::getpid(), random());
  // The needle is built before the fork: the watchdog allocates nothing.
  const std::string needle = fmt::format("{}={}:", kProcessCookieVar, cookie_);
  std::array<int, 2> fds{};
  if (open_pipe(fds) != 0) {
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
  platform_.become_subreaper();
}

ProcessReaper::~ProcessReaper() {
  const std::int32_t exiting = 0;  // nothing unwatched is left: no search by the cookie
  [[maybe_unused]] auto n = ::write(pipe_, &exiting, sizeof exiting);
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
  const bool adopted = platform_.adopts_orphans();
  std::map<pid_t, std::vector<std::size_t>> still_unknown;
  const std::unique_lock no_process_half_started(process_start_mutex());
  const pid_t self = ::getpid();
  const pid_t my_session = ::getsid(0);
  const pid_t my_group = ::getpgrp();
  const std::string prefix = std::string(kProcessCookieVar) + "=" + cookie_ + ":";
  std::size_t killed = 0;
  for (pid_t pid : platform_.sweep_candidates()) {
    if (pid == watchdog_ || pid == self) continue;
    const auto stat = process_table::stat(pid);
    if (!stat) continue;
    // A group leader of our session is a process this runner started (a test file's, a probe's):
    // its owner waits for it. Anything else is an adopted orphan, or (not adopted) a process of
    // the system that carries our cookie.
    const bool own_leader = stat->pgrp == pid && stat->session == my_session;
    if (stat->zombie) {
      if (adopted && !own_leader) ::waitpid(pid, nullptr, WNOHANG);
      continue;
    }
    if (watched_.count(stat->pgrp) > 0) continue;  // a running file's: dies with its group
    const auto index = cookie_index(pid, prefix, environ_);
    if (!adopted && !index) continue;  // every process of the system: only the cookie says ours
    if (index ? running(*index) : own_leader) continue;
    if (!index) {
      // No cookie: it cleared its environment. It came from a file running when it was first
      // seen, so it lives while one of those does.
      auto known = unknown_.find(pid);
      std::vector<std::size_t> suspects = known != unknown_.end() ? known->second : running_files;
      if (std::any_of(suspects.begin(), suspects.end(), running)) {
        still_unknown.emplace(pid, std::move(suspects));
        continue;
      }
    }
    if (stat->pgrp > 1 && stat->pgrp != my_group) ::kill(-stat->pgrp, SIGKILL);
    if (::kill(pid, SIGKILL) == 0) ++killed;
    dying_.push_back(pid);
  }
  unknown_ = std::move(still_unknown);  // forgets those gone, so a reused pid starts afresh
  // Adopted: reaped here. Not adopted: init reaps them; gone once the table shows no live process
  // with our cookie under that pid.
  std::erase_if(dying_, [&](pid_t pid) {
    if (adopted) return ::waitpid(pid, nullptr, WNOHANG) != 0;
    const auto stat = process_table::stat(pid);
    return !stat || stat->zombie || !cookie_index(pid, prefix, environ_);
  });
  return killed + dying_.size();
}

}  // namespace devshim
