// The error policy of devshim, used across every module boundary.
//
// Functions report failures by throwing a subclass of devshim::Error; they never print and never
// exit. The command-line layer (runner/cli/main.cpp) catches Error, prints `runner: error: <what>`
// and exits with exit_code(). Anything else that escapes is a bug and exits 70 (EX_SOFTWARE).
#pragma once

#include <stdexcept>
#include <string>

namespace devshim {

/// Exit codes of the runner (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,            ///< every file passed (or had no tests / only skips)
  kExitFailures = 1,      ///< a file failed, errored, timed out or crashed
  kExitUsage = 2,         ///< bad command line or configuration; nothing ran
  kExitInternal = 70,     ///< a bug in the runner
  kExitInterrupted = 130  ///< SIGINT (SIGTERM 143, SIGHUP 129): finished results are kept
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int exit_code = kExitInternal)
      : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

/// A bad command line, suite file or target: the user must change something. Exit 2.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what, kExitUsage) {}
};

/// The environment failed us (I/O, database, process launch). Exit 1 unless stated.
class RuntimeError : public Error {
 public:
  explicit RuntimeError(const std::string& what) : Error(what, kExitFailures) {}
};

}  // namespace devshim
