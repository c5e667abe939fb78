// What the operating system offers for keeping a test's processes in check, behind one small
// interface with two implementations:
//   linux  (process_platform_linux.cpp, built on Linux only): the runner is a child subreaper
//          (PR_SET_CHILD_SUBREAPER: orphans of a test, setsid daemons included, become its
//          children, and so do the warm start's doubly forked test processes), every child gets
//          SIGKILL when the runner dies (PR_SET_PDEATHSIG), and sweeps look at the runner's own
//          children.
//   posix  (process_platform_posix.cpp, built everywhere; what macOS runs): process groups and
//          sessions only. Orphans go to init, so sweeps look at every process of the system for
//          the run's cookie; no death signal (the watchdog alone cleans up after a killed
//          runner); no warm start (the runner cannot wait for a process it did not fork).
// Both read other processes through runner/engine/process_table.h. The cookie sweep and the
// watchdog that use them are ProcessReaper's (runner/engine/process_reaper.h), the one
// ChildTracker (runner/engine/process_seams.h). What each cannot do: docs/reliability.md.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace devshim {

class ProcessPlatform {
 public:
  virtual ~ProcessPlatform() = default;
  /// "linux" or "posix".
  virtual const char* name() const = 0;
  /// Whether become_subreaper makes the orphans of the runner's children its own children.
  virtual bool adopts_orphans() const = 0;
  /// Makes the calling process the parent of its orphaned descendants, where adopts_orphans.
  virtual void become_subreaper() const = 0;
  /// Called in a child between fork and exec (async-signal-safe: no allocation, no lock): asks
  /// for SIGKILL when the parent dies, where the platform has such a request.
  virtual void die_with_parent() const = 0;
  /// The processes a sweep examines for a test's leftovers: the calling process's children
  /// (orphans adopted) where adopts_orphans, else every process of the system.
  virtual std::vector<pid_t> sweep_candidates() const = 0;
};

/// The posix platform; every build has it.
const ProcessPlatform& posix_platform();

#if defined(DEVSHIM_PLATFORM_LINUX)
/// The linux platform: builds with CMake's DEVSHIM_PLATFORM=linux (the default on Linux) have it,
/// and it is their default.
const ProcessPlatform& linux_platform();
#endif

/// The platform called `name` when this build has it, else nullptr.
const ProcessPlatform* process_platform_named(std::string_view name);

/// The names process_platform_named knows in this build, default first ("linux, posix").
std::string process_platform_names();

/// The process's platform: the build's default (CMake's DEVSHIM_PLATFORM) until
/// select_process_platform. Read by whatever starts or sweeps processes.
const ProcessPlatform& process_platform();

/// Chooses the process's platform: once, at start-up, before any process starts (the command
/// line does, from DEVSHIM_PROCESS_PLATFORM: runner/cli/process_environment.h). A subreaper and
/// a death signal are attributes of the process, not of one run.
void select_process_platform(const ProcessPlatform& platform);

}  // namespace devshim
