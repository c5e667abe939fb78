// `runner runs`: the recorded runs of a database, newest first.
#pragma once

#include <filesystem>

namespace devshim {

/// Prints one line per run (id, suite, mode, status, start, duration, files by status) to
/// stdout and returns 0. Throws RuntimeError when the database cannot be opened.
int list_runs(const std::filesystem::path& db_path, int limit);

}  // namespace devshim
