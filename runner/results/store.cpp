// The Store's core: opening a database (access, identity, stale-run recovery) and the free
// functions on runs and results (times, comparability, status codes). The class's other member
// functions are defined by runner/results/store_schema.cpp (migrations),
// runner/results/store_write.cpp (writers), runner/results/store_read.cpp (readers) and
// runner/results/store_nightly.cpp (nightly operations).
#include "runner/results/store.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <ctime>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "runner/results/store_identity.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// results.status: a stable code per status (migration 12 and the cases view spell it out).
constexpr std::array<std::pair<CaseStatus, int>, 6> kResultStatusCodes{{
    {CaseStatus::kPassed, 0},
    {CaseStatus::kFailed, 1},
    {CaseStatus::kError, 2},
    {CaseStatus::kSkipped, 3},
    {CaseStatus::kXfailed, 4},
    {CaseStatus::kXpassed, 5},
}};

}  // namespace

std::string host_name() {
  std::array<char, 256> buf{};
  if (::gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

std::string comparable_policy(const RunRecord& run) {
  if (!run.policy.empty()) return run.policy;
  return run.mode == "shim" ? "default" : "";
}

std::string missing_links_note(const RunRecord& run) {
  if (run.source_url.empty() || !run.project_commit.empty()) return "";
  return fmt::format(
      "no upstream links: the suite names a source_url, but its project {} is not a git "
      "checkout (an exported tree?), so there is no commit to link at; the reports link to the "
      "local files only",
      run.project_root);
}

json environment_json(const RunRecord& run) {
  json env = json::parse(run.environment.empty() ? "{}" : run.environment, nullptr, false);
  return env.is_object() ? env : json::object();
}

RunVersions run_versions(const RunRecord& run) { return run_versions(run, environment_json(run)); }

RunVersions run_versions(const RunRecord& run, const json& env) {
  RunVersions v;
  if (!env.is_object()) return v;
  if (auto t = env.find("torch"); t != env.end() && t->is_string()) v.torch = t->get<std::string>();
  if (auto shim = env.find("shim"); run.mode == "shim" && shim != env.end() && shim->is_object()) {
    if (auto ver = shim->find("version"); ver != shim->end() && ver->is_string()) {
      v.shim = ver->get<std::string>();
    }
  }
  return v;
}

std::string start_mode(const RunRecord& run) { return start_mode(environment_json(run)); }

std::string start_mode(const json& env) {
  if (!env.is_object()) return "";
  const auto start = env.find("start");
  if (start == env.end() || !start->is_object()) return "";
  const auto mode = start->find("mode");
  return mode != start->end() && mode->is_string() ? mode->get<std::string>() : "";
}

double seconds_between(const std::string& from, const std::string& to) {
  auto parse = [](const std::string& s) -> std::time_t {
    std::tm tm{};
    if (s.size() < 19 || ::strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return 0;
    return ::timegm(&tm);
  };
  const std::time_t a = parse(from);
  const std::time_t b = parse(to);
  return a != 0 && b != 0 && b >= a ? static_cast<double>(b - a) : 0;
}

int result_status_code(CaseStatus status) {
  for (const auto& [s, code] : kResultStatusCodes) {
    if (s == status) return code;
  }
  return 2;  // unreachable: every status has a code
}

CaseStatus result_status(std::int64_t code) {
  for (const auto& [s, c] : kResultStatusCodes) {
    if (c == code) return s;
  }
  return CaseStatus::kError;  // the CHECK allows no other code
}

CudaContact cuda_contact_of(std::int64_t code) {
  switch (code) {
    case 1:
      return CudaContact::kDeviceWork;
    case 2:
      return CudaContact::kAsked;
    default:
      return CudaContact::kNone;
  }
}

std::string iso8601_utc_now() { return iso8601_utc(std::chrono::system_clock::now()); }

std::string local_stamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y%m%d-%H%M%S", &tm);
  return buf.data();
}

namespace {

// Runs left "running" by a runner process of this host that no longer exists.
std::vector<std::int64_t> stale_runs(sql::Database& db) {
  std::vector<std::int64_t> stale;
  sql::Statement s(db, "SELECT id, runner_pid FROM runs WHERE status = 'running' AND host = ?");
  s.bind(1, host_name());
  while (s.step()) {
    auto pid = static_cast<pid_t>(s.int64(1));
    if (pid == ::getpid()) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(s.int64(0));
  }
  return stale;
}

// How to open path for purpose. A reading command opens read-only, after checking that the file
// is devshim's (a foreign or empty one is refused: UsageError); it writes only to bring one of
// devshim's own databases to this schema and identity, or to mark its stale runs, and only when
// it can.
sql::Access access_for(const fs::path& path, Store::Purpose purpose) {
  if (purpose == Store::Purpose::kWrite) return sql::Access::kWrite;
  sql::Database probe(path, sql::Access::kRead);
  const DatabaseIdentity id = identify(probe);
  if (id.kind == DatabaseKind::kForeign) {
    throw UsageError(foreign_database_message(path, id, /*writing=*/false));
  }
  if (id.kind == DatabaseKind::kEmpty) {
    throw UsageError(fmt::format(
        "{}: an empty database: no devshim run is recorded in it (a run, import or merge "
        "writes one; --db names another)",
        path.string()));
  }
  if (id.kind == DatabaseKind::kDevshim && id.user_version >= Store::schema_version() &&
      stale_runs(probe).empty()) {
    return sql::Access::kRead;
  }
  const fs::path folder = fs::absolute(path).parent_path();
  const bool writable = ::access(path.c_str(), W_OK) == 0 && ::access(folder.c_str(), W_OK) == 0;
  return writable ? sql::Access::kWrite : sql::Access::kRead;
}

}  // namespace

Store::Store(const fs::path& path, Purpose purpose) : db_(path, access_for(path, purpose)) {
  if (sqlite3_db_readonly(db_.handle(), "main") == 1) {
    if (purpose == Purpose::kWrite) {
      if (const DatabaseIdentity id = identify(db_); id.kind == DatabaseKind::kForeign) {
        throw UsageError(foreign_database_message(path, id, /*writing=*/true));
      }
      throw RuntimeError(fmt::format(
          "{}: the database is read-only for this user (the file or its folder cannot be "
          "written): runs, imports, merges, prunes and `gaps set` need write access; give a "
          "writable --db or change its permissions (runs, show, history and compare read it as "
          "it is)",
          path.string()));
    }
    if (const int version = stored_schema_version(); version < schema_version()) {
      throw RuntimeError(fmt::format(
          "{}: database schema version {} is older than this runner's ({}) and the file is "
          "read-only: open it once with write access (any runner command) to upgrade it",
          path.string(), version, schema_version()));
    }
    return;
  }
  // Nothing is written before this: another program's file stays as it was.
  if (const DatabaseIdentity id = identify(db_); id.kind == DatabaseKind::kForeign) {
    throw UsageError(foreign_database_message(path, id, /*writing=*/true));
  }
  db_.use_wal();
  db_.exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;");
  migrate();
  mark_stale_runs_interrupted();
}

void Store::mark_stale_runs_interrupted() {
  const std::vector<std::int64_t> stale = stale_runs(db_);
  if (stale.empty()) return;
  sql::Transaction tx(db_);
  sql::Statement u(db_, "UPDATE runs SET status = 'interrupted' WHERE id = ?");
  for (auto id : stale) u.bind(1, id).run();
  tx.commit();
}

}  // namespace devshim
