// The process pool's two seams to machinery it uses and does not own, as small interfaces:
//   ChildTracker  keeps every process of a test file from outliving the run
//                 (ProcessReaper, runner/engine/process_reaper.h, on either process
//                 platform: runner/engine/process_platform.h)
//   WarmParent    forks test processes that start with their imports done
//                 (Zygote, runner/engine/zygote.h)
// PoolCommandRunner (runner/engine/command_runner.h) owns the implementations and hands them to
// the pool (PoolOptions); the pool's tests hand it fakes
// (tests/runner/engine/process_pool_seams_test.cpp). What differs between operating systems lies
// below these seams, in runner/engine/process_platform.h.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "runner/engine/process_start.h"

namespace devshim {

/// The variable that marks every process of a test file with ChildTracker::cookie. Children
/// inherit it, so a process that left the file's group is still known as the file's.
inline constexpr const char* kProcessCookieVar = "DEVSHIM_PROCESS_COOKIE";

/// Called by the pool on its own thread, for each test process it starts.
class ChildTracker {
 public:
  virtual ~ChildTracker() = default;
  /// The value of kProcessCookieVar for the processes of file `index` of the batch.
  virtual std::string cookie(std::size_t index) const = 0;
  /// A file's process group started / has been killed and reaped.
  virtual void watch(pid_t pgid) = 0;
  virtual void forget(pid_t pgid) = 0;
  /// Ends the leftovers of the files not among running_files (indexes of the files running now),
  /// after each file, each tick and at the end. Returns how many are still being ended (0: none;
  /// at the end the pool asks again for up to 2 s until it is 0).
  virtual std::size_t sweep(const std::vector<std::size_t>& running_files) = 0;
};

/// How a warm parent starts; equal options make the same parent (reruns reuse it).
struct WarmStartOptions {
  std::filesystem::path script;      ///< the server it runs (zygote_script)
  std::string python;                ///< the suite's interpreter (a path)
  std::vector<std::string> env;      ///< a cold test process's whole environment, "NAME=value"
  std::filesystem::path cwd;         ///< the project root
  std::vector<std::string> preload;  ///< modules imported before the first fork
  std::filesystem::path log_path;    ///< the parent's own stderr (preload output, errors)
  std::chrono::milliseconds ready_timeout{180'000};
  bool operator==(const WarmStartOptions&) const = default;
};

/// A ready warm parent, as the observers of the pool see it.
struct WarmReady {
  pid_t pid = -1;
  std::vector<std::string> preloaded;  ///< what it imported
  double ready_s = 0;                  ///< how long it took to be ready
};

/// A parent process that forks test processes with their imports done. It starts by itself; the
/// pool hears when it is ready through reply_fd and poll_ready, starting files cold meanwhile.
class WarmParent {
 public:
  enum class State { kStarting, kReady, kFailed };

  virtual ~WarmParent() = default;
  /// Reads news without waiting. kReady: fork_child serves; kFailed: it cannot (why()).
  virtual State poll_ready() = 0;
  virtual State state() const = 0;
  virtual const std::string& why() const = 0;
  /// Readable when poll_ready may have news.
  virtual int reply_fd() const = 0;
  /// When the pool stops waiting for it to be ready (poll_ready then says kFailed).
  virtual std::chrono::steady_clock::time_point deadline() const = 0;
  /// Forks the process that runs `start`, its stdout and stderr on log_path (truncated). Returns
  /// its pid: a child of the pool's process from then on, leader of its own process group.
  /// Throws Error when it cannot: the file starts cold.
  virtual pid_t fork_child(const ChildStart& start, const std::filesystem::path& log_path) = 0;
  /// What it is once ready.
  virtual WarmReady ready() const = 0;
};

}  // namespace devshim
