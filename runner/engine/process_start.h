// Starting one child process: the fork and exec under runner/engine/process_pool.h's pool and
// probes.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/process/v2/process.hpp>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace devshim {

/// What start_process starts.
struct ChildStart {
  std::string executable;         ///< a path (no PATH search)
  std::vector<std::string> args;  ///< argv[1..]; argv[0] is the executable
  std::filesystem::path cwd;
  std::vector<std::string> env;  ///< the child's whole environment, "NAME=value" each
  int stdout_fd = -1;            ///< the runner's descriptor the child writes to; -1: /dev/null
  int stderr_fd = -1;            ///< likewise
  int stdin_fd = -1;             ///< the runner's descriptor the child reads; -1: /dev/null
};

/// Starts the child and returns it attached to ctx (for async_wait).
///
/// The child is the leader of its own process group from before exec (setpgid in the child and
/// again in the parent; ProcessReaper::sweep never sees it in between: starting_a_process), gets
/// SIGKILL when the runner dies where the process platform offers it (linux: PR_SET_PDEATHSIG;
/// runner/engine/process_platform.h), default signal dispositions and an empty
/// signal mask, and no file descriptor but its three standard ones.
///
/// Safe to call from several threads at once, beside threads that allocate or hold locks: between
/// fork and exec the child makes only async-signal-safe system calls. It neither allocates nor
/// calls into asio (Boost.Process's default launcher does both: execution_context::notify_fork
/// in the child), because a lock another thread held at the fork stays held forever in the child,
/// which then hangs and its starter with it. It leaves with _exit when exec fails, so no atexit
/// handler or stdio buffer copied from the runner runs twice.
///
/// Throws boost::system::system_error when the process cannot be started; when exec failed, the
/// error is the child's errno (ENOENT, EACCES...).
boost::process::v2::process start_process(boost::asio::io_context& ctx, const ChildStart& start);

}  // namespace devshim
