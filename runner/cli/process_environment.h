// The runner's environment, read once: the command line takes this snapshot before it does
// anything else and passes it down (runner/engine/environment.h); nothing below the command line
// reads the process's environment.
#pragma once

#include "runner/engine/environment.h"

namespace devshim {

/// The process's environment as it was at the first call; the same object on every call.
const Environment& runner_environment();

/// Applies the settings of env that hold for the whole process: DEVSHIM_DB_TIMEOUT (the
/// database's busy timeout, sql::set_default_busy_ms) and DEVSHIM_PROCESS_PLATFORM (the process
/// platform, runner/engine/process_platform.h: "linux" or "posix", as this build has them; unset
/// or empty: the build's default). Throws UsageError for a platform this build does not have.
void apply_process_settings(const Environment& env);

}  // namespace devshim
