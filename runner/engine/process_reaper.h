// Keeps a test file's processes from outliving it: the ones that leave its process group
// (setsid daemons) and the ones left behind when the runner itself is killed (docs/reliability.md).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "runner/engine/process_platform.h"
#include "runner/engine/process_seams.h"

namespace devshim {

/// Held by a thread of the runner while it starts a process: from before the fork until the child
/// is the leader of its own group (setpgid, in the child and in the parent). ProcessReaper::sweep
/// holds it exclusively, so it never sees a child of the runner in that gap, where it looks like
/// an adopted orphan (in the runner's group, no cookie yet) and would be killed. Any number of
/// threads may start processes at once.
[[nodiscard]] std::shared_lock<std::shared_mutex> starting_a_process();

/// Two safety nets beside the process-group kill of runner/engine/process_pool.h, on either
/// process platform (runner/engine/process_platform.h):
///
/// - A watchdog process, forked at construction, to which watch()/forget() report the groups of
///   running test files. When the runner's end of its pipe closes without the runner having
///   forgotten a group, because the runner died (SIGKILL included), the watchdog sends SIGKILL to
///   those groups and to every process that carries this runner's cookie (also when no group was
///   watched: a file started an instant before the runner died may not be yet), then exits. The
///   destructor tells it the runner exits, so that an exit with no group watched searches nothing.
///   Construct it before starting threads: it forks.
/// - sweep(), for the processes that left their file's group (setsid daemons): on a platform that
///   adopts orphans (linux: the runner becomes a child subreaper), the runner's adopted children,
///   killed and reaped once their file has finished; elsewhere (posix), every process of the
///   system that carries this runner's cookie, killed once its file has finished (init reaps it).
///
/// What no process-level mechanism catches: a descendant that clears its environment and escapes
/// the subreaper (on posix: any that clears its environment), e.g. a process handed to a system
/// service. Linux cgroups would; devshim does not use them (they need privileges a nightly job
/// rarely has).
class ProcessReaper final : public ChildTracker {
 public:
  /// Throws RuntimeError when the pipe or the fork fails. The first form uses the process's
  /// platform (process_platform()); platform must outlive the reaper.
  ProcessReaper();
  explicit ProcessReaper(const ProcessPlatform& platform);
  /// Closes the pipe (the watchdog then finds nothing left to kill) and reaps the watchdog.
  ~ProcessReaper() override;
  ProcessReaper(const ProcessReaper&) = delete;
  ProcessReaper& operator=(const ProcessReaper&) = delete;

  /// "<runner cookie>:<index>".
  std::string cookie(std::size_t index) const override;
  void watch(pid_t pgid) override;
  void forget(pid_t pgid) override;

  /// Kills (SIGKILL to the process and its group) the leftovers whose file is not among
  /// running_files (the indexes of the files running now): where the platform adopts orphans,
  /// the runner's adopted children, reaped here with the adopted zombies; an adopted child
  /// without this runner's cookie (it cleared its environment) belongs to one of the files that
  /// were running when a sweep first saw it and is killed once none of those runs (at once when
  /// none did). Elsewhere, the processes of the system that carry this runner's cookie.
  /// Processes the runner started itself (group leaders of its own session) are left alone.
  /// Returns how many it killed plus how many killed ones are not gone yet (0: no leftovers).
  std::size_t sweep(const std::vector<std::size_t>& running_files) override;

  pid_t watchdog_pid() const { return watchdog_; }

 private:
  const ProcessPlatform& platform_;
  std::vector<char> environ_;  ///< one process's environment, read by sweep
  int pipe_ = -1;              ///< write end; the watchdog reads the other
  pid_t watchdog_ = -1;
  std::string cookie_;
  std::set<pid_t> watched_;   ///< groups of running files
  std::vector<pid_t> dying_;  ///< killed, not reaped yet
  /// Adopted children without a cookie -> the files running when they were first seen.
  std::map<pid_t, std::vector<std::size_t>> unknown_;
};

}  // namespace devshim
