// The warm start of Python test files (issue 18): a zygote, started once per run with exactly the
// environment a cold test process gets, imports torch, the framework and the suite's preloads,
// then forks one child per test file (runner/engine/zygote/devshim_zygote.py, which documents
// what a child is). The runner waits for each child as for a process it started itself: the
// child is re-parented to it, a child subreaper (ProcessReaper).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "runner/engine/launch_plan.h"
#include "runner/engine/process_seams.h"
#include "runner/engine/process_start.h"

namespace devshim {

/// The WarmParent of Python suites.
class Zygote final : public WarmParent {
 public:
  static constexpr std::chrono::milliseconds kExitGrace{2000};

  /// Starts the zygote (its own process group, SIGKILL when the runner dies) and returns at once:
  /// it imports its preloads meanwhile, and is ready once poll_ready() says so. Throws
  /// RuntimeError when it cannot start: the run then starts its files cold.
  explicit Zygote(const WarmStartOptions& options);
  /// Closes the zygote's requests and gives a ready zygote kExitGrace to leave by itself
  /// (running its preloads' atexit handlers and finalizers), then kills its group and reaps it.
  ~Zygote() override;
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  /// Reads the ready line if it has come, without waiting. kReady: fork_child serves; kFailed:
  /// it cannot serve (why() says why: a preload failed, it died, it was not ready within
  /// ready_timeout), and it is gone (one that said a preload failed had kExitGrace to leave as
  /// an interpreter does, cleaning up after the preloads it had imported); kStarting: not yet
  /// (reply_fd() turns readable when there is something to read).
  State poll_ready() override;
  /// Gives up on a zygote still starting: waits up to grace for it to exit by itself, then kills
  /// it; why() is why.
  void give_up(const std::string& why,
               std::chrono::milliseconds grace = std::chrono::milliseconds(0));
  State state() const override { return state_; }
  const std::string& why() const override { return why_; }
  int reply_fd() const override { return from_zygote_; }
  /// When ready_timeout runs out.
  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }

  /// Forks the child that runs `start` (argv: the interpreter, "-m", MODULE, ...), its stdout and
  /// stderr on log_path (truncated). Returns its pid: a child of this process from the return on
  /// (the caller must be a child subreaper), leader of its own process group. Throws
  /// RuntimeError when the zygote cannot (not ready, another thread in it, a command that is
  /// not `python -m`, the zygote gone): that file starts cold.
  pid_t fork_child(const ChildStart& start, const std::filesystem::path& log_path) override;
  WarmReady ready() const override { return {pid_, preloaded_, ready_s_}; }

  /// What the zygote imported, its pid, how long it took to be ready, what started it.
  const std::vector<std::string>& preloaded() const { return preloaded_; }
  pid_t pid() const { return pid_; }
  double ready_s() const { return ready_s_; }
  const WarmStartOptions& options() const { return options_; }

 private:
  std::string request(const std::string& line);
  /// Takes the ready line: kReady, or kFailed with why_.
  State take_ready_line(const std::string& line);
  /// Closes the pipes, waits up to grace for the zygote to exit, kills its group and reaps it
  /// (again: nothing).
  void shut_down(std::chrono::milliseconds grace = std::chrono::milliseconds(0));

  pid_t pid_ = -1;
  int to_zygote_ = -1;    ///< its stdin
  int from_zygote_ = -1;  ///< its replies
  std::string buffered_;  ///< read past the last reply
  std::vector<std::string> preloaded_;
  double ready_s_ = 0;
  State state_ = State::kStarting;
  std::string why_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point deadline_;
  WarmStartOptions options_;
};

}  // namespace devshim
