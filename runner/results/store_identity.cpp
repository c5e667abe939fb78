#include "runner/results/store_identity.h"

#include <fmt/format.h>

#include <algorithm>

namespace devshim {

DatabaseIdentity identify(sql::Database& db) {
  DatabaseIdentity id;
  {
    sql::Statement s(db, "PRAGMA application_id");
    if (s.step()) id.application_id = s.int64(0);
  }
  {
    sql::Statement s(db, "PRAGMA user_version");
    if (s.step()) id.user_version = static_cast<int>(s.int64(0));
  }
  int objects = 0;
  {
    sql::Statement s(db, "SELECT type, name FROM sqlite_master ORDER BY name");
    while (s.step()) {
      ++objects;
      if (s.text(0) == "table" && !s.text(1).starts_with("sqlite_")) id.tables.push_back(s.text(1));
    }
  }
  auto has = [&](const char* table) {
    return std::find(id.tables.begin(), id.tables.end(), table) != id.tables.end();
  };
  const bool unstamped = id.application_id == 0;
  if (id.application_id == kApplicationId) {
    id.kind = DatabaseKind::kDevshim;
  } else if (unstamped && objects == 0 && id.user_version == 0) {
    id.kind = DatabaseKind::kEmpty;
  } else if (unstamped && id.user_version >= 1 && has("runs") && has("files")) {
    id.kind = DatabaseKind::kOldDevshim;
  } else {
    id.kind = DatabaseKind::kForeign;  // another program's application_id, or its tables
  }
  return id;
}

std::string foreign_database_message(const std::filesystem::path& path,
                                     const DatabaseIdentity& identity, bool writing) {
  constexpr std::size_t kNamed = 5;
  std::string tables;
  for (std::size_t i = 0; i < identity.tables.size() && i < kNamed; ++i) {
    tables += (i == 0 ? "" : ", ") + identity.tables[i];
  }
  if (identity.tables.size() > kNamed) {
    tables += fmt::format(" and {} more", identity.tables.size() - kNamed);
  }
  const std::string what = identity.application_id != 0
                               ? fmt::format("application_id {:#x}", identity.application_id)
                           : tables.empty() ? std::string("no devshim table")
                                            : "its tables: " + tables;
  return fmt::format(
      "{}: not a devshim results database but another program's SQLite file ({}): {}; give "
      "devshim's database with --db (a new path makes a new one)",
      path.string(), what,
      writing ? "devshim writes only into its own database or an empty file, so nothing was "
                "written to it"
              : "it was only read, and is unchanged");
}

}  // namespace devshim
