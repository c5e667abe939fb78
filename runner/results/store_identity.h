// Whose SQLite file a database is (docs/database.md#identity): devshim's results databases carry
// SQLite's application_id, so that no command reads another program's file as an empty history
// or writes its tables into it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runner/results/sqlite.h"

namespace devshim {

/// The application_id of every devshim results database: "DvSh" in ASCII.
inline constexpr std::int64_t kApplicationId = 0x44765368;

enum class DatabaseKind {
  kDevshim,     ///< it carries kApplicationId
  kOldDevshim,  ///< no application_id, but a schema version and devshim's runs and files tables:
                ///< written before devshim stamped its databases
  kEmpty,       ///< no table, no version, no application_id: a new file
  kForeign,     ///< anything else: another program's database
};

struct DatabaseIdentity {
  DatabaseKind kind = DatabaseKind::kEmpty;
  std::int64_t application_id = 0;
  int user_version = 0;
  std::vector<std::string> tables;  ///< its tables, sorted
};

/// Reads the identity of an open database. Only reads. Throws RuntimeError when the file is no
/// SQLite database (sql::Database's words).
DatabaseIdentity identify(sql::Database& db);

/// The UsageError's text for a foreign database: whose it seems to be, and what to do. writing:
/// said to a command that would have written to it.
std::string foreign_database_message(const std::filesystem::path& path,
                                     const DatabaseIdentity& identity, bool writing);

}  // namespace devshim
