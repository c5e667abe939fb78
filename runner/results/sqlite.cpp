#include "runner/results/sqlite.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "base/error.h"

namespace devshim::sql {

namespace fs = std::filesystem;

namespace {
constexpr int kBusyMs = 60'000;
std::atomic<int> busy_ms{kBusyMs};
}  // namespace

int default_busy_ms() { return busy_ms.load(); }

void set_default_busy_ms(int ms) { busy_ms.store(ms > 0 ? ms : kBusyMs); }

int parse_busy_timeout(const std::string& seconds) {
  if (seconds.empty()) return 0;
  char* end = nullptr;
  const double s = std::strtod(seconds.c_str(), &end);
  if (end == seconds.c_str() || *end != '\0' || !(s > 0 && s < 86'400)) return 0;
  return static_cast<int>(s * 1000);
}

namespace {

// A file: URI for path with the given query (RFC 3986 percent-encoding of what a path may hold).
std::string file_uri(const fs::path& path, std::string_view query) {
  std::string uri = "file:";
  for (unsigned char c : fs::absolute(path).string()) {
    if (std::isalnum(c) != 0 ||
        std::string_view("/-._~").find(static_cast<char>(c)) != std::string_view::npos) {
      uri += static_cast<char>(c);
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri + "?" + std::string(query);
}

// What a person can do about an error code, beside SQLite's own words; empty when nothing.
std::string_view advice(int code) {
  switch (code & 0xFF) {
    case SQLITE_CORRUPT:
      return "the file is damaged: restore a copy, or give another database with --db";
    case SQLITE_NOTADB:
      return "the file is no SQLite database: give a devshim results database with --db";
    case SQLITE_READONLY:
      return "it is read-only: reading commands (runs, show, history, gaps list) work on it; "
             "runs, imports, merges and prunes need write access";
    case SQLITE_FULL:
      return "the disk is full: free space and try again";
    case SQLITE_IOERR:
      return "reading or writing the file failed: check the disk and that the file is still "
             "there";
    case SQLITE_CONSTRAINT:
      return "the database refused the change (a constraint or trigger devshim did not make?): "
             "check it with `sqlite3 FILE .schema`, or give another database with --db";
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
      return "check the file's and its folder's permissions";
    default:
      return "";
  }
}

// SQLite's allocation statistics take a process-wide mutex on every malloc and free inside
// SQLite; nothing here reads them (sqlite3_memory_used). Set once, before SQLite initialises.
void configure_sqlite_once() {
  static std::once_flag once;
  std::call_once(once, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace

Database::Database(const fs::path& path, Access access, int busy_ms)
    : busy_ms_(busy_ms), path_(path) {
  configure_sqlite_once();
  std::error_code ec;
  int rc = SQLITE_OK;
  if (access == Access::kWrite) {
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    rc = sqlite3_open_v2(path.c_str(), &db_,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  } else {
    // In a folder it cannot write, SQLite cannot make the WAL index (-shm) a reader needs;
    // nothing can change the file there, so it is read as immutable.
    const fs::path folder = fs::absolute(path).parent_path();
    const bool folder_writable = ::access(folder.c_str(), W_OK) == 0;
    const std::string uri = file_uri(path, folder_writable ? "mode=ro" : "mode=ro&immutable=1");
    rc = sqlite3_open_v2(uri.c_str(), &db_,
                         SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  }
  if (rc != SQLITE_OK) {
    std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    const std::string_view hint = advice(rc);
    throw RuntimeError(fmt::format("{}: cannot open database: {}{}{}", path.string(), msg,
                                   hint.empty() ? "" : "; ", hint));
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
  const std::string_view hint = advice(code);
  const std::string tail = hint.empty() ? std::string() : "; " + std::string(hint);
  if (what.empty()) throw RuntimeError(fmt::format("{}: {}{}", path_.string(), message, tail));
  throw RuntimeError(fmt::format("{}: {}: {}{}", path_.string(), what, message, tail));
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
    db_.fail("cannot read it");  // the statement is the runner's business, not the reader's
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
  // What failed in words: the statement is the runner's business, not the reader's.
  db_.fail(sqlite3_stmt_readonly(stmt_) != 0 ? "cannot read it" : "cannot write to it");
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
