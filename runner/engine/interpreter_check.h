// Before anything of a Python suite runs, its interpreter proves that it is Python: a run with
// `--python /bin/true` would otherwise "pass" every file without running a test.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runner/engine/launch_plan.h"

namespace devshim {

/// Runs `interpreter -I -S -c <print a marker and the version>` in cwd with env (isolated and
/// without site: quick, and independent of the shim). Returns the version it printed ("3.11.2").
/// Throws UsageError naming the interpreter, where it was given (origin: "--python", or
/// "\"python\" of <suite file>") and what it did (its exit or signal, and the start of what it
/// printed) when the marker does not come back.
std::string check_python_interpreter(const std::string& interpreter, const std::string& origin,
                                     const Environment& env, const std::filesystem::path& cwd);

/// The names of `modules` (top-level packages) that `interpreter` cannot import: run in cwd with
/// env, as a test process is (site-packages, PYTHONPATH), it asks importlib for each one's spec,
/// importing none (milliseconds). nullopt when it cannot tell (it did not exit with 0).
std::optional<std::vector<std::string>> missing_modules(const std::string& interpreter,
                                                        const std::vector<std::string>& modules,
                                                        const Environment& env,
                                                        const std::filesystem::path& cwd);

/// A module a suite's interpreter must have, and why ("the suite's framework", "its tests import
/// it: tests/test_a.py").
struct RequiredModule {
  std::string module;
  std::string why;
};

/// Throws UsageError when `interpreter` lacks one of `required` (missing_modules; nothing when it
/// cannot tell, the test processes will): one message
/// naming the interpreter, where it was given (origin), each missing module with why it is needed,
/// and the command that installs them (`<interpreter> -m pip install …`).
void require_modules(const std::string& interpreter, const std::string& origin,
                     const std::vector<RequiredModule>& required, const Environment& env,
                     const std::filesystem::path& cwd);

}  // namespace devshim
