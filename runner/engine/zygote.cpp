#include "runner/engine/zygote.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "runner/engine/system_calls.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

enum class Read { kLine, kClosed, kTimeout };

// Reads up to and including the next newline into line, keeping what follows in buffered;
// kClosed when the zygote closed its end (it exited) first, kTimeout when nothing came in time.
Read read_line(int fd, std::string& buffered, std::string& line,
               std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (const auto nl = buffered.find('\n'); nl != std::string::npos) {
      line = buffered.substr(0, nl);
      buffered.erase(0, nl + 1);
      return Read::kLine;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Read::kTimeout;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return Read::kTimeout;
    if (ready < 0) return Read::kClosed;
    std::array<char, 4096> chunk{};
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Read::kClosed;
    buffered.append(chunk.data(), static_cast<std::size_t>(n));
  }
}

}  // namespace

Zygote::Zygote(const WarmStartOptions& o) : options_(o) {
  started_ = std::chrono::steady_clock::now();
  deadline_ = started_ + o.ready_timeout;
  std::array<int, 2> requests{-1, -1};
  std::array<int, 2> replies{-1, -1};
  if (open_pipe(requests) != 0 || open_pipe(replies) != 0) {
    throw RuntimeError(fmt::format("zygote: pipe: {}", std::strerror(errno)));
  }
  const int log = ::open(o.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::string preload;
  for (const auto& m : o.preload) preload += (preload.empty() ? "" : ",") + m;
  ChildStart start{
      o.python,   {o.script.string(), "--preload", preload}, o.cwd, o.env, replies[1], log,
      requests[0]};
  try {
    boost::asio::io_context ctx;
    auto proc = start_process(ctx, start);
    pid_ = proc.id();
    proc.detach();  // waited for by ~Zygote
  } catch (const std::exception& e) {
    for (int fd : {requests[0], requests[1], replies[0], replies[1], log}) {
      if (fd >= 0) ::close(fd);
    }
    throw RuntimeError(fmt::format("zygote: cannot start {}: {}", o.python, e.what()));
  }
  ::close(requests[0]);
  ::close(replies[1]);
  if (log >= 0) ::close(log);
  to_zygote_ = requests[1];
  from_zygote_ = replies[0];
}

Zygote::State Zygote::poll_ready() {
  while (state_ == State::kStarting) {
    if (const auto nl = buffered_.find('\n'); nl != std::string::npos) {
      const std::string line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return take_ready_line(line);
    }
    pollfd p{from_zygote_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 0);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;  // nothing yet
    std::array<char, 4096> chunk{};
    const ssize_t n = ::read(from_zygote_, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const double after =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      give_up(
          fmt::format("zygote: {} ended after {:.1f} s without saying it was ready (its log: "
                      "{})",
                      options_.python, after, options_.log_path.string()));
      break;
    }
    buffered_.append(chunk.data(), static_cast<std::size_t>(n));
  }
  if (state_ == State::kStarting && std::chrono::steady_clock::now() >= deadline_) {
    give_up(fmt::format("zygote: no answer within {} s (its log: {})",
                        options_.ready_timeout.count() / 1000, options_.log_path.string()));
  }
  return state_;
}

Zygote::State Zygote::take_ready_line(const std::string& line) {
  const json ready = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!ready.is_object() || !ready.value("ready", false)) {
    // It said so and is leaving by itself: time to run what its preloads registered to clean up
    // (their temporary directories) before it is killed.
    give_up("zygote: " + (ready.is_object() ? ready.value("error", line) : line), kExitGrace);
    return state_;
  }
  preloaded_ = ready.value("preloaded", std::vector<std::string>{});
  ready_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  state_ = State::kReady;
  return state_;
}

void Zygote::give_up(const std::string& why, std::chrono::milliseconds grace) {
  if (state_ == State::kFailed) return;
  state_ = State::kFailed;
  why_ = why;
  shut_down(grace);
}

Zygote::~Zygote() {
  // A zygote still importing has nothing of its own to clean up yet: killed at once.
  shut_down(state_ == State::kReady ? kExitGrace : std::chrono::milliseconds(0));
}

void Zygote::shut_down(std::chrono::milliseconds grace) {
  close_fd(to_zygote_);
  close_fd(from_zygote_);
  if (pid_ <= 0) return;
  // Until it has exited (a zombie: its pid and group id are not reused before it is reaped).
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (info.si_pid == pid_ || std::chrono::steady_clock::now() >= deadline) break;
    ::usleep(2'000);
  }
  ::kill(-pid_, SIGKILL);  // what is left in its group, and the zygote itself if it has not left
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

std::string Zygote::request(const std::string& line) {
  const std::string out = line + "\n";
  std::size_t written = 0;
  while (written < out.size()) {
    const ssize_t n = ::write(to_zygote_, out.data() + written, out.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RuntimeError(fmt::format("zygote: gone ({})", std::strerror(errno)));
    written += static_cast<std::size_t>(n);
  }
  std::string reply;
  if (const Read got = read_line(from_zygote_, buffered_, reply, options_.ready_timeout);
      got != Read::kLine) {
    throw RuntimeError(got == Read::kTimeout
                           ? fmt::format("zygote: no answer to a fork request within {} s",
                                         options_.ready_timeout.count() / 1000)
                           : std::string("zygote: ended before it answered a fork request"));
  }
  return reply;
}

pid_t Zygote::fork_child(const ChildStart& start, const fs::path& log_path) {
  if (state_ != State::kReady || to_zygote_ < 0) throw RuntimeError("zygote: not running");
  json env = json::object();
  for (const auto& entry : start.env) {
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  const json req{{"argv", start.args},  // after the interpreter
                 {"cwd", start.cwd.string()},
                 {"env", env},
                 {"log", log_path.string()}};
  const json reply = json::parse(request(req.dump(-1, ' ', false, json::error_handler_t::replace)),
                                 nullptr, false);
  if (!reply.is_object() || !reply.contains("pid") || !reply["pid"].is_number_integer()) {
    throw RuntimeError("zygote: " + (reply.is_object() ? reply.value("error", reply.dump())
                                                       : std::string("no reply")));
  }
  return reply["pid"].get<pid_t>();
}

}  // namespace devshim
