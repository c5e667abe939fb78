// The `runner` command line (docs/cli.md): parses arguments, dispatches to a command, and applies
// the error policy of base/error.h (devshim::Error → "runner: error: ..." and its exit code).
#pragma once

#include <functional>
#include <memory>

#include "runner/engine/environment.h"
#include "runner/engine/run_suite.h"

namespace devshim {

/// Where a run's processes and probes come from, given the runner's environment: the executable
/// passes system_services; a test executable replays captured processes instead.
using ServiceFactory = std::function<std::unique_ptr<ServiceSet>(const Environment&)>;

/// The whole command line of `runner`: what main() does, with services for the runs it makes.
/// Returns the process exit code; never throws.
int runner_main(int argc, char** argv, const ServiceFactory& services);

}  // namespace devshim
