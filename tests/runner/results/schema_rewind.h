// Turning a database of the current schema back into an older one, so that tests can check that a
// migration keeps what an older runner wrote.
#pragma once

#include <filesystem>

namespace devshim {

/// Rewrites the database at path as schema 11 wrote it: cases a table again (its rows, class and
/// test names, statuses and messages as the cases view shows them), durations with a rowid, gaps
/// and gap_tests as schema 12 had them (no file_error entries; only the actions and equivalents a
/// person set), and user_version 11. Opening it with a Store then runs migrations 12 to 14
/// again.
void rewind_to_schema_11(const std::filesystem::path& path);

}  // namespace devshim
