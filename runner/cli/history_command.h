// `runner history TEST`: one test's outcomes across recorded runs (docs/cli.md).
#pragma once

#include <filesystem>
#include <string>

namespace devshim {

/// Which runs `runner history` looks at: the newest `limit` that have the test, of `suite` and in
/// `mode` ("shim" or "baseline") when those are not empty.
struct HistoryFilter {
  std::string suite;
  std::string mode;
  int limit = 30;
};

/// Prints the outcomes of TEST ("classname::name", "file::classname::name", "classname.name" or
/// a bare name) in the runs filter picks, newest first, with a timeline and counts; as_json: a
/// JSON array of one object per run instead. Returns 0; throws UsageError when the database does
/// not exist or no run has the test.
int history_command(const std::filesystem::path& db_path, const std::string& test,
                    const HistoryFilter& filter, bool as_json = false);

/// The timeline letter of an outcome: P passed, F failed, E error, S skipped, x xfailed,
/// X xpassed, and f for a flaky test (failed, then passed on a rerun).
char history_letter(const std::string& status, bool flaky);

}  // namespace devshim
