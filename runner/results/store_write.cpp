// The Store's writers: a run's record (begun, claimed, finished, its environment and summary)
// and its files' results (record_file, add_cases, Store::FileWriter: texts and test identities
// stored once, redirections).
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "parsers/line_reader.h"
#include "parsers/signature.h"
#include "runner/results/store.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// 64-bit FNV-1a: the key of a text in table texts (stable across builds and hosts).
std::int64_t text_hash(std::string_view text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  std::int64_t out = 0;
  std::memcpy(&out, &h, sizeof out);
  return out;
}

}  // namespace

std::int64_t Store::begin_run(RunRecord run, const std::vector<std::string>& planned_files) {
  if (run.host.empty()) run.host = host_name();
  if (run.runner_pid == 0) run.runner_pid = ::getpid();
  sql::Transaction tx(db_);
  sql::Statement ins(db_,
                     "INSERT INTO runs (suite, suite_file, framework, targets, command_line, mode, "
                     "status, started_at, finished_at, host, project_root, tests_dir, "
                     "project_commit, out_dir, jobs, timeout_s, runner_pid, source_url, "
                     "environment, baseline_run, previous_run, shard, shard_plan, policy) "
                     "VALUES (?,?,?,?,?,?,?,?,NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, run.suite)
      .bind(2, run.suite_file)
      .bind(3, run.framework)
      .bind(4, json(run.targets).dump())
      .bind(5, json(run.command_line).dump())
      .bind(6, run.mode)
      .bind(7, run.status)
      .bind(8, run.started_at)
      .bind(9, run.host)
      .bind(10, run.project_root)
      .bind(11, run.tests_dir);
  if (run.project_commit.empty()) {
    ins.bind_null(12);
  } else {
    ins.bind(12, run.project_commit);
  }
  ins.bind(13, run.out_dir).bind(14, run.jobs).bind(15, run.timeout_s).bind(16, run.runner_pid);
  ins.bind(17, run.source_url).bind(18, run.environment.empty() ? "{}" : run.environment);
  if (run.baseline_run > 0) {
    ins.bind(19, run.baseline_run);
  } else {
    ins.bind_null(19);
  }
  auto id_or_null = [](std::int64_t id) {
    return id > 0 ? std::optional<std::int64_t>(id) : std::nullopt;
  };
  auto text_or_null = [](const std::string& v) {
    return v.empty() ? std::nullopt : std::optional<std::string>(v);
  };
  ins.bind(20, id_or_null(run.previous_run))
      .bind(21, text_or_null(run.shard))
      .bind(22, text_or_null(run.shard_plan))
      .bind(23, text_or_null(run.policy));
  ins.run();
  const std::int64_t id = db_.last_insert_rowid();
  sql::Statement f(db_, "INSERT INTO files (run_id, path) VALUES (?, ?)");
  for (const auto& p : planned_files) f.bind(1, id).bind(2, p).run();
  tx.commit();
  return id;
}

void Store::record_file(std::int64_t run_id, const FileRecord& file,
                        const std::vector<TestCase>& cases,
                        const std::vector<Redirection>& redirections) {
  FileWriter writer(*this, run_id);
  writer.add(file, cases, redirections);
  writer.commit();
}

void Store::add_cases(std::int64_t run_id, const std::string& path,
                      const std::vector<TestCase>& cases, const std::string& note) {
  FileWriter writer(*this, run_id);
  writer.append(path, cases, note);
  writer.commit();
}

namespace {

constexpr const char* kInsertResult =
    "INSERT INTO results (file_id, test_id, status, duration_s, exception, message, traceback, "
    "signature, source_path, source_line, culprit, traceback_id, message_id, cuda_path, "
    "cuda_branch) VALUES";

// "(?,...,?), ..." for rows rows of results' columns.
std::string result_values(std::size_t rows) {
  std::string row = "(?";
  for (int i = 1; i < Store::FileWriter::kResultColumns; ++i) row += ",?";
  row += ")";
  std::string out;
  for (std::size_t i = 0; i < rows; ++i) out += (i == 0 ? "" : ",") + row;
  return out;
}

}  // namespace

struct Store::FileWriter::Statements {
  explicit Statements(sql::Database& db)
      : upsert_file(db,
                    "INSERT INTO files (run_id, path, status, exit_code, signal, timed_out, "
                    "duration_s, log_path, started_at, finished_at, note, parsed_from, reported) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
                    "ON CONFLICT (run_id, path) DO UPDATE SET status = excluded.status, "
                    "exit_code = excluded.exit_code, signal = excluded.signal, "
                    "timed_out = excluded.timed_out, duration_s = excluded.duration_s, "
                    "log_path = excluded.log_path, started_at = excluded.started_at, "
                    "finished_at = excluded.finished_at, note = excluded.note, "
                    "parsed_from = excluded.parsed_from, reported = excluded.reported"),
        file_id(db, "SELECT id FROM files WHERE run_id = ? AND path = ?"),
        delete_cases(db, "DELETE FROM results WHERE file_id = ?"),
        find_class(db, "SELECT id FROM classes WHERE name = ?"),
        insert_class(db, "INSERT INTO classes (name) VALUES (?)"),
        find_name(db, "SELECT id FROM names WHERE name = ?"),
        insert_name(db, "INSERT INTO names (name) VALUES (?)"),
        find_test(db, "SELECT id FROM tests WHERE class_id = ? AND name_id = ?"),
        insert_test(db,
                    "INSERT INTO tests (class_id, name_id) VALUES (?, ?) "
                    "ON CONFLICT (class_id, name_id) DO NOTHING"),
        upsert_signature(db,
                         "INSERT INTO signatures (signature, exception, message, example, "
                         "first_seen_run, last_seen_run) VALUES (?,?,?,?,?,?) "
                         "ON CONFLICT (signature) DO UPDATE SET last_seen_run = "
                         "max(last_seen_run, excluded.last_seen_run)"),
        insert_case(db, fmt::format("{} {}", kInsertResult, result_values(1))),
        delete_redirections(db, "DELETE FROM redirections WHERE file_id = ?"),
        insert_redirection(db,
                           "INSERT INTO redirections (run_id, file_id, shim, api, requested, "
                           "used, count, site_path, site_line, site_function) "
                           "VALUES (?,?,?,?,?,?,?,?,?,?)"),
        update_duration(db, Store::update_duration_sql()),
        insert_text(db,
                    "INSERT INTO texts (hash, text) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING"),
        find_text(db, "SELECT id, text FROM texts WHERE hash = ?") {}

  sql::Statement upsert_file;
  sql::Statement file_id;
  sql::Statement delete_cases;
  sql::Statement find_class;
  sql::Statement insert_class;
  sql::Statement find_name;
  sql::Statement insert_name;
  sql::Statement find_test;
  sql::Statement insert_test;
  sql::Statement upsert_signature;
  sql::Statement insert_case;
  // kResultBatch rows at once: prepared when the first batch is full (most files recorded
  // during a run, one writer each, have fewer tests).
  std::optional<sql::Statement> insert_case_batch;
  sql::Statement delete_redirections;
  sql::Statement insert_redirection;
  sql::Statement update_duration;
  sql::Statement insert_text;
  sql::Statement find_text;
};

Store::FileWriter::ForeignKeysOff::ForeignKeysOff(sql::Database& db) : db_(db) {
  db_.exec("PRAGMA foreign_keys=OFF");
}

Store::FileWriter::ForeignKeysOff::~ForeignKeysOff() {
  try {
    db_.exec("PRAGMA foreign_keys=ON");
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): a destructor cannot throw
    // Outside a transaction this PRAGMA only sets a flag of the connection: it does not fail.
  }
}

Store::FileWriter::FileWriter(Store& store, std::int64_t run_id)
    : db_(store.db_),
      run_id_(run_id),
      foreign_keys_off_(db_),
      tx_(db_),
      s_(std::make_unique<Statements>(db_)) {}

// Statements are finalized before the transaction ends (members go in reverse order).
Store::FileWriter::~FileWriter() { s_.reset(); }

void Store::FileWriter::commit() {
  write_pending();
  s_.reset();
  tx_.commit();
}

void Store::FileWriter::add(const FileRecord& file, const std::vector<TestCase>& cases,
                            const std::vector<Redirection>& redirections) {
  const std::int64_t run_id = run_id_;
  sql::Statement& u = s_->upsert_file;
  u.bind(1, run_id).bind(2, file.path);
  if (file.status) {
    u.bind(3, to_string(*file.status));
  } else {
    u.bind_null(3);
  }
  u.bind(4, file.exit_code)
      .bind(5, file.signal)
      .bind(6, file.timed_out ? 1 : 0)
      .bind(7, file.duration_s)
      .bind(8, file.log_path)
      .bind(9, file.started_at)
      .bind(10, file.finished_at);
  if (file.note.empty()) {
    u.bind_null(11);
  } else {
    u.bind(11, sanitize_text(file.note));
  }
  if (file.parsed_from.empty()) {
    u.bind_null(12);
  } else {
    u.bind(12, file.parsed_from);
  }
  if (file.reported.present) {
    json r{{"passed", file.reported.passed},   {"failed", file.reported.failed},
           {"errors", file.reported.errors},   {"skipped", file.reported.skipped},
           {"xfailed", file.reported.xfailed}, {"xpassed", file.reported.xpassed}};
    if (file.reported.ran) r["ran"] = *file.reported.ran;
    u.bind(13, r.dump());
  } else {
    u.bind_null(13);
  }
  u.run();

  sql::Statement& id = s_->file_id;
  id.bind(1, run_id).bind(2, file.path);
  if (!id.step()) db_.fail("file row vanished");
  const std::int64_t file_id = id.int64(0);
  id.reset();
  // The file's results written before (a file recorded again) must be there to be deleted.
  if (std::any_of(pending_.begin(), pending_.end(),
                  [&](const PendingResult& r) { return r.file_id == file_id; })) {
    write_pending();
  }
  s_->delete_cases.bind(1, file_id).run();
  insert_cases(file_id, cases);
  s_->delete_redirections.bind(1, file_id).run();
  insert_redirections(file_id, redirections);
  Store::update_duration(s_->update_duration, run_id, file);
}

void Store::FileWriter::append(const std::string& path, const std::vector<TestCase>& cases,
                               const std::string& note) {
  sql::Statement& id = s_->file_id;
  id.bind(1, run_id_).bind(2, path);
  if (!id.step()) db_.fail("no file " + path + " in run " + std::to_string(run_id_));
  const std::int64_t file_id = id.int64(0);
  id.reset();
  insert_cases(file_id, cases);
  sql::Statement set_note(db_, "UPDATE files SET note = ? WHERE id = ?");
  if (note.empty()) {
    set_note.bind_null(1);
  } else {
    set_note.bind(1, sanitize_text(note));
  }
  set_note.bind(2, file_id).run();
}

std::optional<std::int64_t> Store::FileWriter::text_id(const std::string& text) {
  const std::int64_t hash = text_hash(text);
  s_->insert_text.bind(1, hash).bind(2, text).run();
  if (db_.changes() == 1) return db_.last_insert_rowid();
  sql::Statement& find = s_->find_text;
  find.bind(1, hash);
  std::optional<std::int64_t> id;
  if (find.step() && find.text(1) == text) id = find.int64(0);
  find.reset();
  return id;
}

// The id of text in a table of unique texts (classes, names) through cache, inserted when new
// (inserted says so).
std::int64_t Store::FileWriter::interned(std::unordered_map<std::string, std::int64_t>& cache,
                                         sql::Statement& find, sql::Statement& insert,
                                         const std::string& text, bool* inserted) {
  if (auto known = cache.find(text); known != cache.end()) return known->second;
  find.bind(1, text);
  std::int64_t id = 0;
  if (find.step()) {
    id = find.int64(0);
  } else {
    insert.bind(1, text).run();
    id = db_.last_insert_rowid();
    if (inserted != nullptr) *inserted = true;
  }
  find.reset();
  // Bounded memory whatever the number of distinct names (parametrized tests have many).
  if (cache.size() >= kInternCacheSize) cache.clear();
  cache.emplace(text, id);
  return id;
}

std::int64_t Store::FileWriter::test_id(const std::string& classname, const std::string& name) {
  bool new_class = false;
  const std::int64_t class_id =
      interned(class_ids_, s_->find_class, s_->insert_class, classname, &new_class);
  if (new_class) new_classes_.insert(class_id);
  const std::int64_t name_id = interned(name_ids_, s_->find_name, s_->insert_name, name, nullptr);
  // A new class's test is new unless this writer wrote it before: insert first. Another's is
  // most likely there (the same suite, the night before): look first.
  if (new_classes_.count(class_id) != 0) {
    s_->insert_test.bind(1, class_id).bind(2, name_id).run();
    if (db_.changes() == 1) return db_.last_insert_rowid();
  }
  sql::Statement& find = s_->find_test;
  find.bind(1, class_id).bind(2, name_id);
  std::int64_t id = 0;
  if (find.step()) {
    id = find.int64(0);
  } else {
    s_->insert_test.bind(1, class_id).bind(2, name_id).run();
    id = db_.last_insert_rowid();
  }
  find.reset();
  return id;
}

std::pair<std::optional<std::string>, std::optional<std::int64_t>> Store::FileWriter::stored_text(
    std::string clean) {
  if (clean.empty()) return {};
  if (const std::optional<std::int64_t> id = text_id(clean)) return {std::nullopt, id};
  return {std::move(clean), std::nullopt};
}

void Store::FileWriter::insert_cases(std::int64_t file_id, const std::vector<TestCase>& cases) {
  sql::Statement& sig = s_->upsert_signature;
  auto opt_text = [](const std::string& v) -> std::optional<std::string> {
    if (v.empty()) return std::nullopt;
    return sanitize_text(v);
  };
  for (const TestCase& c : cases) {
    PendingResult r;
    std::string exception = sanitize_text(c.exception);
    std::string message = sanitize_text(c.message);
    if (is_failure(c.status) || !c.culprit.empty()) {
      r.signature = failure_signature(exception, message);
      sig.bind(1, *r.signature)
          .bind(2, exception)
          .bind(3, normalize_message(message))
          .bind(4, message)
          .bind(5, run_id_)
          .bind(6, run_id_)
          .run();
    }
    r.file_id = file_id;
    r.test_id = test_id(sanitize_text(c.classname), sanitize_text(c.name));
    r.status = result_status_code(c.status);
    r.duration_s = c.duration_s;
    if (!exception.empty()) r.exception = std::move(exception);
    // A message or traceback goes to texts, once however many cases print it.
    std::tie(r.message, r.message_id) = stored_text(std::move(message));
    std::tie(r.traceback, r.traceback_id) = stored_text(sanitize_text(c.traceback));
    r.source_path = opt_text(c.source.path);
    if (c.source.line > 0) r.source_line = c.source.line;
    r.culprit = opt_text(c.culprit);
    r.cuda_path = static_cast<int>(c.cuda_contact);
    r.cuda_branch = c.fails_in_cuda_branch ? 1 : 0;
    pending_.push_back(std::move(r));
    if (pending_.size() == kResultBatch) write_pending();
  }
}

// Binds one row of results' 15 columns at parameters first + 1 ... first + 15.
void Store::FileWriter::bind_result(sql::Statement& ins, int first, const PendingResult& r) {
  ins.bind(first + 1, r.file_id)
      .bind(first + 2, r.test_id)
      .bind(first + 3, r.status)
      .bind(first + 4, r.duration_s)
      .bind(first + 5, r.exception)
      .bind(first + 6, r.message)
      .bind(first + 7, r.traceback)
      .bind(first + 8, r.signature)
      .bind(first + 9, r.source_path)
      .bind(first + 10, r.source_line)
      .bind(first + 11, r.culprit)
      .bind(first + 12, r.traceback_id)
      .bind(first + 13, r.message_id)
      .bind(first + 14, r.cuda_path)
      .bind(first + 15, r.cuda_branch);
}

void Store::FileWriter::write_pending() {
  if (pending_.size() == kResultBatch) {
    auto& batch = s_->insert_case_batch;
    if (!batch)
      batch.emplace(db_, fmt::format("{} {}", kInsertResult, result_values(kResultBatch)));
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      bind_result(*batch, static_cast<int>(i) * kResultColumns, pending_[i]);
    }
    batch->run();
  } else {
    for (const PendingResult& r : pending_) {
      bind_result(s_->insert_case, 0, r);
      s_->insert_case.run();
    }
  }
  pending_.clear();
}

void Store::FileWriter::insert_redirections(std::int64_t file_id,
                                            const std::vector<Redirection>& redirections) {
  sql::Statement& ins = s_->insert_redirection;
  auto opt_text = [](const std::string& v) {
    return v.empty() ? std::nullopt : std::optional<std::string>(sanitize_text(v));
  };
  for (const Redirection& r : redirections) {
    ins.bind(1, run_id_)
        .bind(2, file_id)
        .bind(3, sanitize_text(r.shim))
        .bind(4, sanitize_text(r.api))
        .bind(5, sanitize_text(r.requested))
        .bind(6, sanitize_text(r.used))
        .bind(7, static_cast<std::int64_t>(r.count))
        .bind(8, opt_text(r.site_file))
        .bind(9, r.site_line > 0 ? std::optional<int>(r.site_line) : std::nullopt)
        .bind(10, opt_text(r.site_function))
        .run();
  }
}

void Store::finish_run(std::int64_t run_id, const std::string& status,
                       const std::string& finished_at) {
  sql::Statement u(db_, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?");
  u.bind(1, status).bind(2, finished_at).bind(3, run_id).run();
}

bool Store::claim_run(std::int64_t run_id) {
  sql::Statement u(db_,
                   "UPDATE runs SET status = 'running', finished_at = NULL, runner_pid = ?, "
                   "host = ? WHERE id = ? AND status = 'interrupted'");
  u.bind(1, static_cast<std::int64_t>(::getpid())).bind(2, host_name()).bind(3, run_id).run();
  return db_.changes() == 1;
}

void Store::set_environment(std::int64_t run_id, const std::string& environment_json) {
  sql::Statement u(db_, "UPDATE runs SET environment = ? WHERE id = ?");
  u.bind(1, environment_json).bind(2, run_id).run();
}

void Store::set_summary(std::int64_t run_id, const std::string& summary_json) {
  sql::Statement u(db_, "UPDATE runs SET summary = ? WHERE id = ?");
  u.bind(1, summary_json).bind(2, run_id).run();
}

}  // namespace devshim
