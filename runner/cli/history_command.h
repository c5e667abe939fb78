// `runner history TEST`: one test's outcomes across recorded runs (docs/cli.md).
#pragma once

#include <filesystem>
#include <string>

namespace devshim {

/// Prints the outcomes of TEST ("classname::name", "file::classname::name", "classname.name" or
/// a bare name) in the newest limit runs that have it, newest first, with a timeline and counts.
/// suite (when not empty) narrows the runs. Returns 0; throws UsageError when the database does
/// not exist or no run has the test.
int history_command(const std::filesystem::path& db_path, const std::string& test,
                    const std::string& suite, int limit);

/// The timeline letter of an outcome: P passed, F failed, E error, S skipped, x xfailed,
/// X xpassed, and f for a flaky test (failed, then passed on a rerun).
char history_letter(const std::string& status, bool flaky);

}  // namespace devshim
