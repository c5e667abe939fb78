// `runner runs`: the recorded runs of a database, newest first.
#pragma once

#include <filesystem>

namespace devshim {

/// Prints one line per run, newest first, to stdout and returns 0: id, suite, mode, the shim's
/// policy, status, start, duration, tests, pass rate, new failures against the previous run,
/// regressions against the baseline run, files by status. Counts a report made are read from
/// runs.summary; without one (a running run, one from before schema 10) tests and pass rate are
/// counted from its cases and the comparisons are "?". as_json: a JSON array of those fields
/// and the stored summary instead. Throws UsageError when the database does not exist,
/// RuntimeError when it cannot be opened.
int list_runs(const std::filesystem::path& db_path, int limit, bool as_json = false);

}  // namespace devshim
