// The command-line tests' way to run the runner on recorded test processes
// (tests/support/replay_services.h): `replay_runner` replays the recording named for the run;
// with DEVSHIM_RECAPTURE=1 in the test's environment it runs the real processes instead and
// records them there, so that a recording is only ever made by the real suite
// (tests/runner/fixtures/replay/README.md).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace devshim::testing {

/// The folder of the recording of that name (tests/runner/fixtures/replay/<name>).
std::filesystem::path recording(const std::string& name);

/// Runs `replay_runner args...` with env added; a run of a suite among args replays the
/// recording `name` (or records it, as above), out being its --out folder. source: the folder
/// whose files the processes ran (default: args[0], the suite folder); a recording made of other
/// files than source holds now fails the test.
RunResult replay_run(const std::string& name, const std::filesystem::path& out,
                     const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env = {},
                     const std::filesystem::path& source = {});

/// Runs `replay_runner args...` for a command that starts no test process (show, runs, gaps).
RunResult replay_command(const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env = {});

}  // namespace devshim::testing
