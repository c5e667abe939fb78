// Before anything of a Python suite runs, its interpreter proves that it is Python: a run with
// `--python /bin/true` would otherwise "pass" every file without running a test.
#pragma once

#include <filesystem>
#include <string>

#include "runner/engine/launch_plan.h"

namespace devshim {

/// Runs `interpreter -I -S -c <print a marker and the version>` in cwd with env (isolated and
/// without site: quick, and independent of the shim). Returns the version it printed ("3.11.2").
/// Throws UsageError naming the interpreter, where it was given (origin: "--python", or
/// "\"python\" of <suite file>") and what it did (its exit or signal, and the start of what it
/// printed) when the marker does not come back.
std::string check_python_interpreter(const std::string& interpreter, const std::string& origin,
                                     const Environment& env, const std::filesystem::path& cwd);

}  // namespace devshim
