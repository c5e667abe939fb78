#include "runner/engine/process_pool.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/system/system_error.hpp>
#include <csignal>
#include <cstring>
#include <functional>
#include <memory>
#include <set>

#include "base/error.h"
#include "runner/engine/interrupt.h"
#include "runner/engine/process_start.h"
#include "runner/engine/system_calls.h"

namespace devshim {

namespace asio = boost::asio;
namespace bp2 = boost::process::v2;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string signal_name(int signo) {
  const char* name = signal_abbreviation(signo);
  return name != nullptr ? std::string(name) : "signal " + std::to_string(signo);
}

namespace {

std::vector<std::string> environment_strings(const Environment& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) {
    std::string kv;
    kv.reserve(k.size() + 1 + v.size());
    kv.append(k).append(1, '=').append(v);
    out.push_back(std::move(kv));
  }
  return out;
}

std::vector<std::string> environment_strings(const ProcessSpec& spec) {
  if (!spec.base_env) return environment_strings(spec.env);
  Environment merged = *spec.base_env;
  for (const auto& [k, v] : spec.env) merged[k] = v;
  return environment_strings(merged);
}

void fill_status(ProcessResult& r, int native_status) {
  if (WIFSIGNALED(native_status)) {
    r.signal = WTERMSIG(native_status);
  } else if (WIFEXITED(native_status)) {
    r.exit_code = WEXITSTATUS(native_status);
  } else {
    r.exit_code = native_status;
  }
}

void kill_group(pid_t pgid, int sig) {
  if (pgid > 1) ::kill(-pgid, sig);
}

class PoolRun {
 public:
  PoolRun(const PoolOptions& options, const std::vector<ProcessSpec>& specs, PoolObserver& observer)
      : options_(options),
        specs_(specs),
        observer_(observer),
        signals_(ctx_),
        warm_replies_(ctx_),
        warm_deadline_(ctx_),
        ticker_(ctx_),
        log_watch_(ctx_) {}

  bool run() {
    struct Handles {
      Handles() { set_pool_handles_signals(true); }
      ~Handles() { set_pool_handles_signals(false); }
      Handles(const Handles&) = delete;
      Handles& operator=(const Handles&) = delete;
    } handles;
    if (const int signo = interrupt_signal(); signo != 0) {
      // A signal came before the pool: nothing starts.
      interrupted_ = true;
      seen_signals_ = interrupt_count();
      observer_.on_interrupt(signo);
    } else if (interrupt_fd() >= 0) {
      signals_.assign(::fcntl(interrupt_fd(), F_DUPFD_CLOEXEC, 0));
      wait_for_signal();
    }
    schedule_tick();
    if (options_.max_log_bytes > 0) watch_logs();
    if (options_.warm_parent != nullptr) watch_warm_parent();
    fill_slots();
    shutdown_when_done();
    ctx_.run();
    return !interrupted_;
  }

 private:
  struct Slot {
    std::size_t index;
    std::unique_ptr<bp2::process> proc;
    pid_t pgid = 0;
    asio::steady_timer timeout_timer;
    asio::steady_timer kill_timer;
    Clock::time_point start;
    ProcessResult result;
    bool finished = false;  ///< finish() ran: the process was reaped and reported

    explicit Slot(asio::io_context& ctx) : timeout_timer(ctx), kill_timer(ctx) {}
  };

  // Starts the first specs not started yet, in order, up to the jobs limit. One whose lock a
  // running process holds is passed over until that process ends. Scans at most the passed-over
  // specs before the first one that can start.
  void fill_slots() {
    const auto jobs = static_cast<std::size_t>(std::max(1, options_.jobs));
    for (std::size_t i = first_unstarted_; i < specs_.size(); ++i) {
      if (interrupted_ || running_.size() >= jobs) break;
      if (started_[i]) continue;
      // A file that imports what the warm parent preloads waits for it (and the files after it with
      // it); the others start cold.
      if (warm_parent_starting() && specs_[i].waits_for_warm) break;
      if (lock_busy(specs_[i])) continue;
      held_locks_.insert(specs_[i].locks.begin(), specs_[i].locks.end());
      started_[i] = true;
      ++started_count_;
      start(i);
    }
    while (first_unstarted_ < specs_.size() && started_[first_unstarted_]) ++first_unstarted_;
  }

  bool lock_busy(const ProcessSpec& spec) const {
    return std::any_of(spec.locks.begin(), spec.locks.end(),
                       [this](const std::string& lock) { return held_locks_.count(lock) != 0; });
  }

  void release_locks(std::size_t index) {
    for (const std::string& lock : specs_[index].locks) held_locks_.erase(lock);
  }

  bool warm_parent_starting() const { return options_.warm_parent != nullptr && !warm_settled_; }

  void shutdown_when_done() {
    if (running_.empty() && (interrupted_ || started_count_ == specs_.size())) shutdown();
  }

  // The warm parent starts beside the first files: the pool hears when it is ready (or failed).
  void watch_warm_parent() {
    WarmParent& parent = *options_.warm_parent;
    if (parent.poll_ready() != WarmParent::State::kStarting) {
      settle_warm_parent();
      return;
    }
    warm_replies_.assign(::fcntl(parent.reply_fd(), F_DUPFD_CLOEXEC, 0));
    warm_deadline_.expires_at(parent.deadline());
    warm_deadline_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) warm_parent_news();
    });
    wait_for_warm_parent();
  }

  void wait_for_warm_parent() {
    warm_replies_.async_wait(asio::posix::stream_descriptor::wait_read,
                             [this](const boost::system::error_code& ec) {
                               if (!ec) warm_parent_news();
                             });
  }

  void warm_parent_news() {
    if (warm_settled_ || done_) return;
    if (options_.warm_parent->poll_ready() == WarmParent::State::kStarting) {
      wait_for_warm_parent();
      return;
    }
    settle_warm_parent();
    fill_slots();
    shutdown_when_done();
  }

  void settle_warm_parent() {
    warm_settled_ = true;
    boost::system::error_code ignored;
    warm_replies_.close(ignored);
    warm_deadline_.cancel();
    const WarmParent& parent = *options_.warm_parent;
    const bool ready = parent.state() == WarmParent::State::kReady;
    observer_.on_warm_start(ready ? std::optional<WarmReady>(parent.ready()) : std::nullopt,
                            parent.why());
  }

  void start(std::size_t index) {
    const ProcessSpec& spec = specs_[index];
    observer_.on_start(index);
    auto slot = std::make_unique<Slot>(ctx_);
    slot->index = index;
    slot->result.started_at = std::chrono::system_clock::now();
    slot->start = Clock::now();

    std::error_code fs_ec;
    fs::create_directories(spec.log_path.parent_path(), fs_ec);
    if (!spec.junit_path.empty()) fs::remove(spec.junit_path, fs_ec);
    int fd = ::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      fail_launch(std::move(slot),
                  "cannot open log " + spec.log_path.string() + ": " + std::strerror(errno));
      return;
    }
    try {
      std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
      auto env = environment_strings(spec);
      if (options_.children != nullptr) {
        env.push_back(std::string(kProcessCookieVar) + "=" + options_.children->cookie(index));
      }
      ChildStart child{spec.argv.at(0), std::move(args), spec.cwd, std::move(env), fd, fd};
      if (options_.warm_parent != nullptr &&
          options_.warm_parent->state() == WarmParent::State::kReady) {
        try {
          const pid_t pid = options_.warm_parent->fork_child(child, spec.log_path);
          slot->proc = std::make_unique<bp2::process>(ctx_.get_executor(), pid);
          slot->result.warm = true;
        } catch (const Error& e) {
          observer_.on_cold_start(index, e.what());
        }
      }
      if (!slot->proc) slot->proc = std::make_unique<bp2::process>(start_process(ctx_, child));
      slot->pgid = slot->proc->id();
    } catch (const boost::system::system_error& e) {
      ::close(fd);  // what() appends " [system:2]": the message alone reads better in a report
      fail_launch(std::move(slot), "cannot start " + spec.argv.at(0) + ": " + e.code().message());
      return;
    } catch (const std::exception& e) {
      ::close(fd);
      fail_launch(std::move(slot), "cannot start " + spec.argv.at(0) + ": " + e.what());
      return;
    }
    ::close(fd);
    if (options_.children != nullptr) options_.children->watch(slot->pgid);

    Slot* s = slot.get();
    s->timeout_timer.expires_after(options_.timeout);
    s->timeout_timer.async_wait([this, s](const boost::system::error_code& ec) {
      // Already queued when finish() cancelled it: the process ended in time.
      if (ec || s->finished) return;
      s->result.timed_out = true;
      s->result.timeout_s = std::chrono::duration<double>(options_.timeout).count();
      terminate(*s);
    });
    s->proc->async_wait(
        [this, s](const boost::system::error_code& /*ec*/, int /*code*/) { finish(s); });
    running_.push_back(std::move(slot));
  }

  void fail_launch(std::unique_ptr<Slot> slot, std::string message) {
    release_locks(slot->index);
    slot->result.launch_error = std::move(message);
    slot->result.finished_at = std::chrono::system_clock::now();
    observer_.on_finish(slot->index, slot->result);
  }

  // SIGTERM to the group now, SIGKILL after the grace.
  void terminate(Slot& s) {
    kill_group(s.pgid, SIGTERM);
    s.kill_timer.expires_after(options_.kill_grace);
    s.kill_timer.async_wait([&s](const boost::system::error_code& ec) {
      if (!ec && !s.finished) kill_group(s.pgid, SIGKILL);  // retired_ keeps s
    });
  }

  void finish(Slot* s) {
    s->finished = true;
    s->result.duration_s = std::chrono::duration<double>(Clock::now() - s->start).count();
    s->result.finished_at = std::chrono::system_clock::now();
    fill_status(s->result, s->proc->native_exit_code());
    // Grandchildren that outlive the test's own process die with it.
    kill_group(s->pgid, SIGKILL);
    s->timeout_timer.cancel();
    s->kill_timer.cancel();
    cut_log(*s);
    auto it = std::find_if(running_.begin(), running_.end(),
                           [s](const std::unique_ptr<Slot>& p) { return p.get() == s; });
    std::unique_ptr<Slot> owned = std::move(*it);
    running_.erase(it);
    release_locks(owned->index);
    if (options_.children != nullptr) {
      // And those that left the group (setsid daemons), once adopted by the runner.
      options_.children->forget(owned->pgid);
      sweep();
    }
    observer_.on_finish(owned->index, owned->result);
    // The process object's completion handler has returned; destroying it now is safe because
    // the process was reaped (its destructor terminates only running processes).
    retired_.push_back(std::move(owned));
    fill_slots();
    shutdown_when_done();
  }

  // The signals runner/engine/interrupt.h caught: the first stops the run, a later one kills the
  // running groups at once.
  void wait_for_signal() {
    signals_.async_wait(
        asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
          if (ec) return;
          std::array<char, 64> drained{};
          while (::read(signals_.native_handle(), drained.data(), drained.size()) > 0) {
          }
          const int count = interrupt_count();
          if (count > seen_signals_) on_signals(seen_signals_ == 0);
          seen_signals_ = count;
          if (running_.empty()) {
            shutdown();
          } else {
            wait_for_signal();
          }
        });
  }

  void on_signals(bool first) {
    if (first && !interrupted_) {
      interrupted_ = true;
      observer_.on_interrupt(interrupt_signal());
      for (auto& s : running_) {
        s->result.interrupted = true;
        terminate(*s);
      }
    } else {
      for (auto& s : running_) kill_group(s->pgid, SIGKILL);
    }
  }

  bool log_past_limit(const Slot& s) const {
    std::error_code ec;
    const auto size = fs::file_size(specs_[s.index].log_path, ec);
    return !ec && size > options_.max_log_bytes;
  }

  // A log past max_log_bytes (written between two checks, or before the process exited) keeps
  // the limit's worth.
  void cut_log(Slot& s) {
    if (options_.max_log_bytes == 0 || !log_past_limit(s)) return;
    s.result.log_too_big = true;
    std::error_code ignored;
    fs::resize_file(specs_[s.index].log_path, options_.max_log_bytes, ignored);
  }

  // Every log_check, each running process whose log has passed max_log_bytes: SIGKILL to its
  // group at once (a flood would go on through a SIGTERM's grace).
  void watch_logs() {
    log_watch_.expires_after(options_.log_check);
    log_watch_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || done_) return;
      for (auto& s : running_) {
        if (s->finished || s->result.log_too_big || !log_past_limit(*s)) continue;
        s->result.log_too_big = true;
        kill_group(s->pgid, SIGKILL);
      }
      watch_logs();
    });
  }

  void schedule_tick() {
    ticker_.expires_after(options_.tick);
    ticker_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || done_) return;
      if (options_.children != nullptr) sweep();  // leftovers that exit by themselves: reaped
      observer_.on_tick();
      schedule_tick();
    });
  }

  std::size_t sweep() {
    std::vector<std::size_t> running;
    running.reserve(running_.size());
    for (const auto& s : running_) running.push_back(s->index);
    return options_.children->sweep(running);
  }

  void shutdown() {
    done_ = true;
    if (options_.children != nullptr) {
      // Until every leftover is gone (killed ones take a moment to die): at most 2 s.
      const auto deadline = Clock::now() + std::chrono::seconds(2);
      while (sweep() > 0 && Clock::now() < deadline) ::usleep(20'000);
    }
    boost::system::error_code ignored;
    signals_.cancel(ignored);
    signals_.close(ignored);
    warm_replies_.close(ignored);
    warm_deadline_.cancel();
    ticker_.cancel();
    log_watch_.cancel();
  }

  const PoolOptions& options_;
  const std::vector<ProcessSpec>& specs_;
  PoolObserver& observer_;
  asio::io_context ctx_;
  asio::posix::stream_descriptor signals_;       ///< a copy of interrupt_fd()
  asio::posix::stream_descriptor warm_replies_;  ///< a copy of the starting warm parent's reply_fd
  asio::steady_timer warm_deadline_;             ///< its ready_timeout
  asio::steady_timer ticker_;
  asio::steady_timer log_watch_;  ///< with max_log_bytes: watch_logs
  std::vector<std::unique_ptr<Slot>> running_;
  std::vector<std::unique_ptr<Slot>> retired_;
  std::vector<bool> started_ = std::vector<bool>(specs_.size());
  std::size_t started_count_ = 0;
  std::size_t first_unstarted_ = 0;   ///< every spec before it has started
  std::set<std::string> held_locks_;  ///< the locks of the running processes
  bool interrupted_ = false;
  int seen_signals_ = 0;
  bool warm_settled_ = false;  ///< the warm parent was heard ready (or failed)
  bool done_ = false;
};

}  // namespace

bool ProcessPool::run(const std::vector<ProcessSpec>& specs, PoolObserver& observer) {
  PoolRun run(options_, specs, observer);
  return run.run();
}

CapturedProcess capture_process(const std::vector<std::string>& argv, const fs::path& cwd,
                                std::chrono::milliseconds timeout, const Environment& env,
                                bool with_stderr) {
  CapturedProcess result;
  if (argv.empty()) return result;
  asio::io_context ctx;
  asio::readable_pipe out(ctx);
  std::unique_ptr<bp2::process> proc;
  try {
    std::string exe = find_executable(argv[0], env);
    if (exe.empty()) {
      result.error = "not found";
      return result;
    }
    std::array<int, 2> fds{};
    if (open_pipe(fds) != 0) {
      result.error = std::strerror(errno);
      return result;
    }
    out.assign(fds[0]);
    ChildStart child{std::move(exe),
                     std::vector<std::string>(argv.begin() + 1, argv.end()),
                     cwd,
                     environment_strings(env),
                     fds[1],
                     with_stderr ? fds[1] : -1};
    try {
      proc = std::make_unique<bp2::process>(start_process(ctx, child));
    } catch (...) {
      ::close(fds[1]);
      throw;
    }
    ::close(fds[1]);  // the child's copy is the only writer left: end of output at its exit
  } catch (const std::exception& e) {
    result.error = e.what();
    return result;
  }
  result.started = true;
  std::array<char, 4096> buf{};
  // Set when the process has exited. A timer's handler already queued when the exit cancels
  // it runs with success all the same: without this the 50 ms check would re-arm for ever
  // and ctx.run() would never return.
  bool exited = false;
  asio::steady_timer timer(ctx);
  timer.expires_after(timeout);
  timer.async_wait([&](const boost::system::error_code& ec) {
    if (ec || exited) return;
    result.timed_out = true;
    kill_group(proc->id(), SIGKILL);
  });
  // An interrupted run does not wait for its probes (runner/engine/interrupt.h).
  asio::steady_timer interrupt_check(ctx);
  std::function<void(const boost::system::error_code&)> check_interrupt =
      [&](const boost::system::error_code& ec) {
        if (ec || exited) return;
        if (interrupt_signal() != 0) {
          result.timed_out = true;  // no answer, as after a timeout
          kill_group(proc->id(), SIGKILL);
          return;
        }
        interrupt_check.expires_after(std::chrono::milliseconds(50));
        interrupt_check.async_wait(check_interrupt);
      };
  check_interrupt({});
  std::function<void(const boost::system::error_code&, std::size_t)> on_read =
      [&](const boost::system::error_code& ec, std::size_t n) {
        result.output.append(buf.data(), n);
        if (!ec) out.async_read_some(asio::buffer(buf), on_read);
      };
  out.async_read_some(asio::buffer(buf), on_read);
  int status = -1;
  proc->async_wait([&](const boost::system::error_code&, int) {
    exited = true;
    status = proc->native_exit_code();
    kill_group(proc->id(), SIGKILL);  // leftovers holding the pipe open
    timer.cancel();
    interrupt_check.cancel();
  });
  ctx.run();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::optional<std::string> capture_output(const std::vector<std::string>& argv, const fs::path& cwd,
                                          std::chrono::milliseconds timeout,
                                          const Environment& env) {
  CapturedProcess r = capture_process(argv, cwd, timeout, env);
  if (!r.started || r.timed_out || r.exit_code != 0) return std::nullopt;
  return std::move(r.output);
}

}  // namespace devshim
