// A run's services (runner/engine/run_suite.h ServiceSet) that record what real test processes
// left, or replay it without starting any: the `replay_runner` test executable
// (replay_runner_main.cpp) is the real command line on top of them.
//
// A recording is a folder that mirrors a run's --out folder: each process's log, its pytest or
// GoogleTest XML and the shim's redirection record under the same relative path as in the out
// folder (baseline/logs/test_x.py.log, logs/test_x.py.xml, trials/<setting>/...), and
// processes.json: by the log's relative path, how the process ended (ProcessResult), and by batch,
// the warm start the pool reported; environment.json: the probes' answers. Absolute paths in the
// copied text are written as @PROJECT_ROOT@ (the suite's project root), @OUT@ (the out folder)
// and @SOURCE@ (this checkout), and put back on replay, so that a recording made in one checkout
// replays in another.
#pragma once

#include <filesystem>
#include <memory>

#include "runner/engine/run_suite.h"

namespace devshim::testing {

/// Real processes and probes (system_services), each process's files copied into dir as above
/// when it ends; out: the run's --out folder.
std::unique_ptr<ServiceSet> recording_services(const Environment& runner_env,
                                               const std::filesystem::path& dir,
                                               const std::filesystem::path& out);

/// No process: each spec gets the recorded files of the process with the same path relative to
/// out, and ends as it did; the probes answer what they answered. A spec without a recording
/// throws std::runtime_error naming the path it looked for.
std::unique_ptr<ServiceSet> replay_services(const std::filesystem::path& dir,
                                            const std::filesystem::path& out);

}  // namespace devshim::testing
