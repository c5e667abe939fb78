// `runner show RUN [--status S]`: a recorded run's files and tests.
#pragma once

#include <filesystem>
#include <string>

namespace devshim {

/// Prints the run's header, then each file (status, duration, test counts, log) with its tests
/// beneath it: all tests with --all, else those that did not pass. status_filter (a file or test
/// status, e.g. "failed") keeps only files and tests with that status, and says so when none has
/// it. An interrupted run ends with the command that resumes it. run is an id or "latest".
/// as_json: {"run": {...}, "files": [{"path", "status", "duration_s", "note", "log", "tests":
/// [{"classname", "name", "status", "culprit", "flaky", "duration_s", "message", "source"}]}]}
/// with every file and test, or those status_filter keeps (all_tests is then moot).
/// Throws UsageError for an unknown run or status.
int show_run(const std::filesystem::path& db_path, const std::string& run,
             const std::string& status_filter, bool all_tests, bool as_json = false);

}  // namespace devshim
