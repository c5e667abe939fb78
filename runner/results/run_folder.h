// Which database a run's output folder belongs to.
//
// A database can be copied (docs/nightly.md copies the history into each shard); the copy's runs
// name the same output folders as the original's. Each folder therefore carries a marker,
// <folder>/.devshim-db, holding the absolute path of the database that wrote it, and what would
// delete or rewrite a folder (`runner prune`, `runner report` without -o, `--resume`) first asks
// whether the folder is this database's.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "runner/results/store.h"

namespace devshim {

/// The marker's file name inside a run's output folder.
inline constexpr const char* kRunFolderMarker = ".devshim-db";

/// Writes (replaces) dir's marker: dir belongs to db. Throws RuntimeError when it cannot.
void claim_run_folder(const std::filesystem::path& dir, const std::filesystem::path& db);

/// The database dir belongs to when that is another database file that exists; nullopt when dir
/// is db's, has no marker (folders written before markers existed, imported logs) or names a
/// database that no longer exists (a renamed or deleted original: its copy may have the folder).
std::optional<std::filesystem::path> foreign_owner(const std::filesystem::path& dir,
                                                   const std::filesystem::path& db);

/// What the runner writes for one test file, relative to its run's output folder: its log, the
/// XML beside it (pytest, GoogleTest) and the shim's redirection record; empty when the file has
/// no log. (The record's lock, <record>.lock, is the shim's, not a result: merge leaves it.)
std::vector<std::filesystem::path> file_outputs(const FileRecord& file);

}  // namespace devshim
