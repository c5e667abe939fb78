#include "runner/results/sqlite.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "runner/base/error.h"

namespace devshim::sql {

namespace fs = std::filesystem;

int default_busy_ms() {
  const char* v = std::getenv("DEVSHIM_DB_TIMEOUT");
  if (v != nullptr && *v != '\0') {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (end != v && *end == '\0' && s > 0 && s < 86'400) return static_cast<int>(s * 1000);
  }
  return 60'000;
}

Database::Database(const fs::path& path, int busy_ms) : busy_ms_(busy_ms), path_(path) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  int rc =
      sqlite3_open_v2(path.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw RuntimeError(fmt::format("{}: cannot open database: {}", path.string(), msg));
  }
  sqlite3_busy_timeout(db_, busy_ms);
  sqlite3_extended_result_codes(db_, 1);
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::fail(std::string_view what) const {
  if (db_ == nullptr) throw RuntimeError(fmt::format("{}: {}: closed", path_.string(), what));
  fail_with(sqlite3_extended_errcode(db_), what, sqlite3_errmsg(db_));
}

void Database::fail_with(int code, std::string_view what, std::string_view message) const {
  if ((code & 0xFF) == SQLITE_BUSY || (code & 0xFF) == SQLITE_LOCKED) {
    throw BusyError(fmt::format(
        "{}: the database is locked by another process (waited {} s; DEVSHIM_DB_TIMEOUT sets "
        "the wait): {}",
        path_.string(), busy_ms_ / 1000.0, message));
  }
  if (what.empty()) throw RuntimeError(fmt::format("{}: {}", path_.string(), message));
  throw RuntimeError(fmt::format("{}: {}: {}", path_.string(), what, message));
}

void Database::exec(std::string_view sql) {
  char* err = nullptr;
  std::string s(sql);
  const int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    fail_with(sqlite3_extended_errcode(db_), "", msg);
  }
}

void Database::use_wal() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_ms_);
  for (;;) {
    try {
      exec("PRAGMA journal_mode=WAL");
      return;
    } catch (const BusyError&) {
      if (std::chrono::steady_clock::now() >= deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

int Database::changes() const { return sqlite3_changes(db_); }

std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

Statement::Statement(Database& db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK) {
    db_.fail(fmt::format("cannot prepare \"{}\"", sql));
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int i, std::int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) db_.fail("bind");
  return *this;
}
Statement& Statement::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) db_.fail("bind");
  return *this;
}
Statement& Statement::bind(int i, std::string_view v) {
  if (sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) !=
      SQLITE_OK) {
    db_.fail("bind");
  }
  return *this;
}
Statement& Statement::bind_null(int i) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) db_.fail("bind");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(fmt::format("\"{}\"", sqlite3_sql(stmt_)));
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::int64_t Statement::int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::real(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Statement::text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  return p == nullptr ? std::string()
                      : std::string(reinterpret_cast<const char*>(p),
                                    static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
}
std::optional<std::int64_t> Statement::opt_int64(int col) const {
  if (is_null(col)) return std::nullopt;
  return int64(col);
}
std::optional<double> Statement::opt_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}
std::optional<std::string> Statement::opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) {
    char* err = nullptr;
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, &err);
    sqlite3_free(err);
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace devshim::sql
