// Helpers for the C++ tests: temporary folders, files, and child processes started from argv.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace devshim::testing {

/// A fresh folder under $TMPDIR, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

/// Writes text to path, creating parent folders.
void write_file(const std::filesystem::path& path, const std::string& text);
std::string read_file(const std::filesystem::path& path);

/// A child started with posix_spawn in its own process group.
struct Child {
  pid_t pid = -1;
  std::filesystem::path out_path;  ///< stdout+stderr captured here
};

/// Starts argv with env (added to the inherited environment; an empty value removes the
/// variable) and cwd; stdout+stderr go to out_path.
Child spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const std::filesystem::path& out_path,
            const std::filesystem::path& cwd = std::filesystem::current_path());

/// Waits up to timeout; returns the raw wait status, or nullopt (child killed) on timeout.
std::optional<int> wait_for(const Child& child, std::chrono::milliseconds timeout);

/// Runs argv to completion (timeout: killed, returns -1); returns the exit code, or 128+signal.
struct RunResult {
  int exit_code = -1;
  std::string output;
};
RunResult run(const std::vector<std::string>& argv,
              const std::map<std::string, std::string>& env = {},
              std::chrono::milliseconds timeout = std::chrono::seconds(120));

/// True while pid names a live process (a zombie counts as dead).
bool process_alive(pid_t pid);

/// The pids listed (one per file, first line) in every *.pid file of dir.
std::vector<pid_t> pids_in(const std::filesystem::path& dir);

/// Polls pred every 20 ms until it is true or timeout passes; returns its last value.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    struct timespec ts {
      0, 20'000'000
    };
    nanosleep(&ts, nullptr);
  }
  return true;
}

}  // namespace devshim::testing
