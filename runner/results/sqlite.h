// A thin RAII layer over the SQLite C API. Every failure throws RuntimeError naming the database
// file and what went wrong in words (SQLite's message; for a damaged, foreign or read-only file,
// what to do), never an SQL statement; a database that stayed locked by another connection past
// the busy timeout throws BusyError.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace devshim::sql {

class Database;

/// Another process held the database locked for longer than the busy timeout.
class BusyError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

/// The busy timeout of connections opened without one: 60 s unless set_default_busy_ms changed
/// it (the command line does, from DEVSHIM_DB_TIMEOUT).
int default_busy_ms();
/// Sets default_busy_ms for the process; ms <= 0 restores 60 s.
void set_default_busy_ms(int ms);
/// A busy timeout given in seconds as text (DEVSHIM_DB_TIMEOUT): a number > 0 and < a day, in
/// milliseconds; 0 for anything else (empty, not a number, out of range).
int parse_busy_timeout(const std::string& seconds);

/// A prepared statement. bind() indices are 1-based, column() indices 0-based.
class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, std::int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view v);
  Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Statement& bind_null(int i);
  template <typename T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }

  /// Advances to the next row: true while a row is available.
  bool step();
  /// Runs a statement that returns no rows.
  void run();
  void reset();

  bool is_null(int col) const;
  std::int64_t int64(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  std::optional<std::int64_t> opt_int64(int col) const;
  std::optional<double> opt_real(int col) const;
  std::optional<std::string> opt_text(int col) const;

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

/// How a Database is opened.
enum class Access {
  kWrite,  ///< read and write, creating the file and its parent folders
  /// Read only, never creating anything: a database on a read-only file or in a read-only folder
  /// (opened "immutable" there, as nothing can change it under the reader) can still be read.
  kRead,
};

/// One connection. It is used by one thread at a time (SQLite's multi-thread mode: no mutex
/// taken per call); threads that read at once each open their own.
class Database {
 public:
  /// Opens the file. A statement that finds the database locked by another connection retries
  /// for busy_ms, then throws BusyError.
  explicit Database(const std::filesystem::path& path, Access access = Access::kWrite,
                    int busy_ms = default_busy_ms());
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Runs one or more statements that return no rows.
  void exec(std::string_view sql);
  /// Puts the database in WAL mode (a no-op once it is). Two connections that turn a new database
  /// to WAL at once both hold a read lock and want to write, and SQLite refuses one of them at once
  /// without calling the busy handler; this retries that refusal until the busy timeout.
  void use_wal();
  std::int64_t last_insert_rowid() const;
  /// Rows changed by the last INSERT, UPDATE or DELETE.
  int changes() const;
  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }
  [[noreturn]] void fail(std::string_view what) const;

 private:
  [[noreturn]] void fail_with(int code, std::string_view what, std::string_view message) const;

  sqlite3* db_ = nullptr;
  int busy_ms_ = 0;
  std::filesystem::path path_;
};

/// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace devshim::sql
