// `runner show RUN [--status S]`: a recorded run's files and tests.
#pragma once

#include <filesystem>
#include <string>

namespace devshim {

/// Prints the run's header, then each file (status, duration, test counts, log) with its tests
/// beneath it: all tests with --all, else those that did not pass. status_filter (a file or test
/// status, e.g. "failed") keeps only files and tests with that status, and says so when none has
/// it. An interrupted run ends with the command that resumes it. run is an id or "latest".
/// Throws UsageError for an unknown run or status.
int show_run(const std::filesystem::path& db_path, const std::string& run,
             const std::string& status_filter, bool all_tests);

}  // namespace devshim
