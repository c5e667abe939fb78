// Runs test processes, N at once, each in its own process group, with a timeout and a clean kill.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/engine/launch_plan.h"
#include "runner/engine/process_seams.h"

namespace devshim {

/// What one process did. Exactly one of exit_code / signal / launch_error is set.
struct ProcessResult {
  std::optional<int> exit_code;  ///< the process exited with this code
  std::optional<int> signal;     ///< the process was terminated by this signal
  std::string launch_error;      ///< it could not be started (bad interpreter, unreadable cwd...)
  bool timed_out = false;        ///< the runner killed it because it ran past the timeout
  double timeout_s = 0;          ///< with timed_out: the timeout it ran past
  bool interrupted = false;      ///< the runner killed it because the run was interrupted
  /// Its log passed PoolOptions::max_log_bytes: the runner killed its group when it saw it
  /// running (signal SIGKILL), and cut the log to the limit.
  bool log_too_big = false;
  bool warm = false;      ///< forked from the warm parent (else started cold)
  double duration_s = 0;  ///< start to exit of the process itself
  std::chrono::system_clock::time_point started_at;
  std::chrono::system_clock::time_point finished_at;
};

struct PoolOptions {
  int jobs = 1;                                 ///< processes at once (>= 1)
  std::chrono::milliseconds timeout{900'000};   ///< per process; then SIGTERM to the group
  std::chrono::milliseconds kill_grace{5'000};  ///< SIGTERM → SIGKILL delay
  /// Largest log a process may write; 0: no limit. Past it, its whole group gets SIGKILL
  /// (ProcessResult::log_too_big) and the log is cut to this size. Only the log: a test may
  /// write files of any size elsewhere (a 2 GiB checkpoint), as it could under plain pytest.
  std::uint64_t max_log_bytes = 0;
  std::chrono::milliseconds log_check{100};  ///< how often the logs' sizes are read
  std::chrono::milliseconds tick{1'000};     ///< period of PoolObserver::on_tick
  /// When set: each child carries its cookie, the tracker watches each group while it runs, and
  /// sweeps leftovers after each file, each tick and at the end (runner/engine/process_seams.h).
  ChildTracker* children = nullptr;
  /// Python suites: start the files warm, from a warm parent with these options, which
  /// PoolCommandRunner starts and keeps (runner/engine/command_runner.h); unset: cold.
  std::optional<WarmStartOptions> warm;
  /// The warm parent ProcessPool forks each child from, once it is ready; a child it cannot fork
  /// starts cold (PoolObserver::on_cold_start). While it is still starting, a spec with
  /// waits_for_warm waits for it (and the specs after it), and the others start cold. Null:
  /// every child starts cold.
  WarmParent* warm_parent = nullptr;
};

/// Callbacks from ProcessPool::run, all on the calling thread.
class PoolObserver {
 public:
  virtual ~PoolObserver() = default;
  virtual void on_start(std::size_t /*index*/) {}
  virtual void on_finish(std::size_t /*index*/, const ProcessResult& /*result*/) {}
  virtual void on_tick() {}
  /// With a warm parent: file `index` starts cold because the parent could not fork it (why).
  virtual void on_cold_start(std::size_t /*index*/, const std::string& /*why*/) {}
  /// With PoolOptions::warm, before a warm parent starts (its imports may take a while).
  virtual void on_warm_starting(const WarmStartOptions& /*options*/) {}
  /// With a warm parent: it is ready (ready set; at once when it was already) or could not start
  /// (ready unset, why says why) and every file from then on starts cold. Not called when the
  /// pool ends while the parent is still starting.
  virtual void on_warm_start(const std::optional<WarmReady>& /*ready*/,
                             const std::string& /*why*/) {}
  /// A SIGINT/SIGTERM/SIGHUP reached the runner; no new process starts after it.
  virtual void on_interrupt(int /*signo*/) {}
};

/// Starts processes in the order given, at most options.jobs at once. A spec holding a lock
/// (ProcessSpec::locks) that a running process holds waits for it to end, and the specs after it
/// start first: two processes holding one lock never run at the same time.
///
/// Each child: its own process group (setpgid before exec), stdin = /dev/null, stdout and stderr
/// into spec.log_path (opened with O_TRUNC; parent folders created), cwd = spec.cwd, environment
/// = exactly spec.env, default signal dispositions, SIGKILL if the runner dies where the process
/// platform offers it (runner/engine/process_platform.h). A child past the timeout gets SIGTERM on
/// its whole group, then SIGKILL after the grace. When a child exits, whatever is left of its group
/// (grandchildren) gets SIGKILL, so no process of a test outlives its file.
///
/// The signals runner/engine/interrupt.h catches interrupt the run (one caught before run()
/// too): no new process starts, the running groups get SIGTERM, then SIGKILL after the grace (at
/// once on a further signal), and on_finish reports them with interrupted = true. run() returns
/// false when interrupted, true when every spec ran. Specs never started get no callback.
class ProcessPool {
 public:
  explicit ProcessPool(PoolOptions options) : options_(std::move(options)) {}
  bool run(const std::vector<ProcessSpec>& specs, PoolObserver& observer);

 private:
  PoolOptions options_;
};

/// Runs argv to completion with stdout captured (stderr discarded) and returns its output, or
/// nullopt when it cannot start, exits non-zero, runs past timeout, or the run is interrupted
/// (runner/engine/interrupt.h: then it is killed). For short probes such as `git rev-parse HEAD`.
/// env: the child's whole environment (nullptr: the runner's own).
/// What capture_process saw of a short process.
struct CapturedProcess {
  bool started = false;  ///< false: it could not start (error says why)
  std::string error;
  std::optional<int> exit_code;  ///< when it exited by itself
  std::optional<int> signal;     ///< when a signal ended it
  bool timed_out = false;        ///< killed after the timeout
  std::string output;            ///< its stdout (and stderr, with_stderr), as far as it got
};

/// Runs argv (argv[0] looked up in env's PATH) in cwd with env and collects its output; past
/// timeout its group is killed. Never throws for the process's sake.
CapturedProcess capture_process(const std::vector<std::string>& argv,
                                const std::filesystem::path& cwd, std::chrono::milliseconds timeout,
                                const Environment& env, bool with_stderr = false);

/// capture_process's output when the process exited with 0; nullopt otherwise.
std::optional<std::string> capture_output(const std::vector<std::string>& argv,
                                          const std::filesystem::path& cwd,
                                          std::chrono::milliseconds timeout,
                                          const Environment& env);

/// "SIGSEGV" for 11, "signal 99" for unknown numbers.
std::string signal_name(int signo);

}  // namespace devshim
