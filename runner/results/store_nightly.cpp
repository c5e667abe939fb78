// The Store's nightly operations: the run a run is compared with, durations for scheduling,
// flaky tests' attempts, a test's history, pruning (schema: docs/database.md, migration 6).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "parsers/line_reader.h"
#include "runner/results/store.h"

namespace devshim {

namespace {

// A running mean that becomes an exponential moving average once a file has this many samples:
// the newest duration then weighs 1 / kDurationWindow.
constexpr int kDurationWindow = 5;

std::optional<std::string> text_or_null(const std::string& v) {
  return v.empty() ? std::nullopt : std::optional<std::string>(sanitize_text(v));
}

// The tests a user's TEST may mean: a pytest node id, "file::classname::name", "classname::name",
// "classname.name"; a bare name gives an empty classname.
struct TestQuery {
  struct Candidate {
    std::string file;  ///< files.path to match; empty: any
    std::string classname, name;
    bool after_prefix = false;  ///< the stored class name may have more before a '.'
  };
  std::vector<Candidate> candidates;  ///< the most specific reading first
};

TestQuery parse_test_query(const std::string& test) {
  TestQuery q;
  // A pytest node id, "tests/sub/test_x.py::TestC::test_y[p]": the class name is the module's
  // dotted path (from the project root, or from a rootdir below it: each tail of the path) and
  // the classes.
  if (const std::size_t py = test.find(".py::"); py != std::string::npos) {
    const std::size_t last = test.rfind("::");
    const std::size_t mid = test.rfind("::", last - 1);
    if (mid == py + 3) {  // "test_x.py::tests.test_x.T::test_y": the file in the tests folder
      q.candidates.push_back(
          {test.substr(0, py + 3), test.substr(py + 5, last - py - 5), test.substr(last + 2)});
    }
    std::vector<std::string> parts;
    for (std::size_t from = py + 5;;) {
      const std::size_t sep = test.find("::", from);
      parts.push_back(test.substr(from, sep == std::string::npos ? sep : sep - from));
      if (sep == std::string::npos) break;
      from = sep + 2;
    }
    std::string classes;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) classes += "." + parts[i];
    std::string module = test.substr(0, py);
    std::replace(module.begin(), module.end(), '/', '.');
    for (std::size_t from = 0; from != std::string::npos;) {
      q.candidates.push_back({"", module.substr(from) + classes, parts.back()});
      const std::size_t dot = module.find('.', from);
      from = dot == std::string::npos ? dot : dot + 1;
    }
    // A rootdir above the project root (the suite is a folder of a larger project): the stored
    // class name has the way down in front, "sub.proj.tests.test_x.T" (native_id.cpp).
    q.candidates.push_back({"", module + classes, parts.back(), /*after_prefix=*/true});
    return q;
  }
  if (auto last = test.rfind("::"); last != std::string::npos) {
    const std::string name = test.substr(last + 2);
    std::string prefix = test.substr(0, last);
    std::string file;
    if (auto mid = prefix.rfind("::"); mid != std::string::npos) {
      file = prefix.substr(0, mid);
      prefix = prefix.substr(mid + 2);
    }
    q.candidates.push_back({file, prefix, name});
    return q;
  }
  // "pkg.mod.Class.test_x[1.5]": the name starts after the last '.' outside brackets and
  // parentheses (parameters and subtest descriptions may hold dots).
  int depth = 0;
  std::size_t split = std::string::npos;
  for (std::size_t i = 0; i < test.size(); ++i) {
    const char c = test[i];
    if (c == '[' || c == '(') ++depth;
    if ((c == ']' || c == ')') && depth > 0) --depth;
    if (c == '.' && depth == 0) split = i;
    if (c == ' ' && depth == 0) break;  // "test_x (i=1)": the subtest part follows
  }
  if (split != std::string::npos)
    q.candidates.push_back({"", test.substr(0, split), test.substr(split + 1)});
  q.candidates.push_back({"", "", test});
  return q;
}

}  // namespace

const char* Store::update_duration_sql() {
  return "INSERT INTO durations (suite, path, avg_s, samples, last_run) "
         "SELECT suite, ?, ?, 1, id FROM runs WHERE id = ? "
         "ON CONFLICT (suite, path) DO UPDATE SET "
         "avg_s = avg_s + (excluded.avg_s - avg_s) / min(samples + 1, ?), "
         "samples = samples + 1, last_run = excluded.last_run "
         "WHERE last_run <> excluded.last_run";
}

void Store::update_duration(sql::Statement& s, std::int64_t run_id, const FileRecord& file) {
  if (!file.status || *file.status == FileStatus::kInterrupted || file.duration_s <= 0) return;
  s.bind(1, file.path).bind(2, file.duration_s).bind(3, run_id).bind(4, kDurationWindow).run();
}

std::optional<RunRecord> Store::comparable_run(const RunRecord& run, std::int64_t before_id) {
  // A version is compared only where run names it; an environment that is no JSON names none.
  sql::Statement s(db_,
                   "SELECT id FROM runs WHERE suite = ? AND targets = ? AND mode = ? "
                   "AND coalesce(shard, '') = ? AND status IN ('passed', 'failed') "
                   "AND (? = 0 OR id < ?) AND coalesce(policy, CASE mode WHEN 'shim' THEN "
                   "'default' ELSE '' END) = ? "
                   "AND (?8 = '' OR CASE WHEN json_valid(environment) THEN "
                   "coalesce(json_extract(environment, '$.torch'), '') END = ?8) "
                   "AND (?9 = '' OR CASE WHEN json_valid(environment) THEN "
                   "coalesce(json_extract(environment, '$.shim.version'), '') END = ?9) "
                   "ORDER BY id DESC LIMIT 1");
  const RunVersions versions = run_versions(run);
  s.bind(1, run.suite)
      .bind(2, nlohmann::json(run.targets).dump())
      .bind(3, run.mode)
      .bind(4, run.shard)
      .bind(5, before_id)
      .bind(6, before_id)
      .bind(7, comparable_policy(run))
      .bind(8, versions.torch)
      .bind(9, versions.shim);
  if (!s.step()) return std::nullopt;
  const std::int64_t id = s.int64(0);
  s.reset();
  return this->run(id);
}

void Store::set_previous_run(std::int64_t run_id, std::int64_t previous_run) {
  sql::Statement s(db_, "UPDATE runs SET previous_run = ? WHERE id = ?");
  s.bind(1, previous_run > 0 ? std::optional<std::int64_t>(previous_run) : std::nullopt)
      .bind(2, run_id)
      .run();
}

std::map<std::string, double> Store::durations(const std::string& suite) {
  sql::Statement s(db_, "SELECT path, avg_s FROM durations WHERE suite = ?");
  s.bind(1, suite);
  std::map<std::string, double> out;
  while (s.step()) out[s.text(0)] = s.real(1);
  return out;
}

void Store::record_reruns(std::int64_t run_id, const RerunResult& rerun) {
  sql::Transaction tx(db_);
  sql::Statement id(db_, "SELECT id FROM files WHERE run_id = ? AND path = ?");
  id.bind(1, run_id).bind(2, rerun.path);
  if (!id.step()) db_.fail(fmt::format("no file {} in run {}", rerun.path, run_id));
  const std::int64_t file_id = id.int64(0);
  id.reset();
  sql::Statement ins(db_,
                     "INSERT OR REPLACE INTO attempts (run_id, file_id, classname, name, attempt, "
                     "status, message) VALUES (?,?,?,?,?,?,?)");
  for (const CaseAttempt& a : rerun.attempts) {
    ins.bind(1, run_id)
        .bind(2, file_id)
        .bind(3, sanitize_text(a.classname))
        .bind(4, sanitize_text(a.name))
        .bind(5, a.attempt)
        .bind(6, to_string(a.status))
        .bind(7, text_or_null(a.message))
        .run();
  }
  sql::Statement flaky(db_,
                       "UPDATE results SET flaky = 1, status = ?, duration_s = ? "
                       "WHERE file_id = ? AND test_id = (SELECT t.id FROM tests t JOIN classes k "
                       "ON k.id = t.class_id JOIN names n ON n.id = t.name_id "
                       "WHERE k.name = ? AND n.name = ?)");
  for (const TestCase& c : rerun.flaky) {
    flaky.bind(1, result_status_code(c.status))
        .bind(2, c.duration_s)
        .bind(3, file_id)
        .bind(4, sanitize_text(c.classname))
        .bind(5, sanitize_text(c.name))
        .run();
  }
  if (rerun.status) {
    sql::Statement u(db_, "UPDATE files SET status = ? WHERE id = ?");
    u.bind(1, to_string(*rerun.status)).bind(2, file_id).run();
  }
  if (!rerun.note.empty()) {
    sql::Statement u(db_,
                     "UPDATE files SET note = CASE WHEN coalesce(note, '') = '' THEN ?1 "
                     "ELSE note || '; ' || ?1 END WHERE id = ?2");
    u.bind(1, sanitize_text(rerun.note)).bind(2, file_id).run();
  }
  tx.commit();
}

std::vector<CaseAttempt> Store::attempts(std::int64_t run_id) {
  sql::Statement s(db_,
                   "SELECT f.path, a.classname, a.name, a.attempt, a.status, a.message "
                   "FROM attempts a JOIN files f ON f.id = a.file_id WHERE a.run_id = ? "
                   "ORDER BY f.path, a.classname, a.name, a.attempt");
  s.bind(1, run_id);
  std::vector<CaseAttempt> out;
  while (s.step()) {
    CaseAttempt a;
    a.file = s.text(0);
    a.classname = s.text(1);
    a.name = s.text(2);
    a.attempt = static_cast<int>(s.int64(3));
    a.status = parse_case_status(s.text(4)).value_or(CaseStatus::kError);
    a.message = s.text(5);
    out.push_back(std::move(a));
  }
  return out;
}

std::map<std::string, std::vector<Redirection>> Store::file_redirections(std::int64_t run_id) {
  sql::Statement s(db_,
                   "SELECT f.path, d.shim, d.api, d.requested, d.used, d.count, d.site_path, "
                   "d.site_line, d.site_function FROM redirections d "
                   "JOIN files f ON f.id = d.file_id WHERE d.run_id = ? ORDER BY d.id");
  s.bind(1, run_id);
  std::map<std::string, std::vector<Redirection>> out;
  while (s.step()) {
    Redirection r;
    r.shim = s.text(1);
    r.api = s.text(2);
    r.requested = s.text(3);
    r.used = s.text(4);
    r.count = s.int64(5);
    r.site_file = s.text(6);
    r.site_line = static_cast<int>(s.opt_int64(7).value_or(0));
    r.site_function = s.text(8);
    out[s.text(0)].push_back(std::move(r));
  }
  return out;
}

std::map<CaseStatus, std::size_t> Store::case_counts(std::int64_t run_id) {
  sql::Statement s(db_,
                   "SELECT r.status, count(*) FROM files f JOIN results r ON r.file_id = f.id "
                   "WHERE f.run_id = ? GROUP BY r.status");
  s.bind(1, run_id);
  std::map<CaseStatus, std::size_t> out;
  while (s.step()) {
    out[result_status(s.int64(0))] = static_cast<std::size_t>(s.int64(1));
  }
  return out;
}

std::vector<TestHistoryEntry> Store::test_history(const std::string& test, const std::string& suite,
                                                  int limit, const std::string& mode) {
  const TestQuery q = parse_test_query(test);
  std::vector<TestHistoryEntry> out;
  for (const auto& [file, classname, name, after_prefix] : q.candidates) {
    // The test's row (by class and name through their unique indexes, or every test of that
    // name when no class is given), then its results through results_by_test.
    std::string match = classname.empty() ? "n.name = ?2" : "k.name = ?1 AND n.name = ?2";
    if (after_prefix) {
      match =
          "n.name = ?2 AND length(k.name) > length(?1) + 1 AND "
          "substr(k.name, -length(?1) - 1) = '.' || ?1";
    }
    sql::Statement s(
        db_,
        fmt::format("SELECT f.run_id, f.path, k.name, n.name, c.status, "
                    "c.duration_s, c.exception, coalesce(c.message, m.text), c.culprit, "
                    "c.flaky, "
                    "(SELECT count(*) FROM attempts a WHERE a.file_id = c.file_id "
                    "AND a.classname = k.name AND a.name = n.name) "
                    "FROM names n JOIN tests t ON t.name_id = n.id "
                    "JOIN classes k ON k.id = t.class_id "
                    "JOIN results c ON c.test_id = t.id LEFT JOIN texts m ON m.id = c.message_id "
                    "JOIN files f ON f.id = c.file_id JOIN runs r ON "
                    "r.id = f.run_id WHERE {} AND (?3 = '' OR f.path = ?3) "
                    "AND (?4 = '' OR r.suite = ?4) AND (?6 = '' OR r.mode = ?6) "
                    "ORDER BY f.run_id DESC, f.path LIMIT ?5",
                    match));
    s.bind(1, classname).bind(2, name).bind(3, file).bind(4, suite).bind(5, limit).bind(6, mode);
    while (s.step()) {
      TestHistoryEntry e;
      e.run.id = s.int64(0);
      e.file = s.text(1);
      e.test.classname = s.text(2);
      e.test.name = s.text(3);
      e.test.status = result_status(s.int64(4));
      e.test.duration_s = s.opt_real(5).value_or(0);
      e.test.exception = s.text(6);
      e.test.message = s.text(7);
      e.test.culprit = s.text(8);
      e.flaky = s.int64(9) != 0;
      e.attempts = static_cast<int>(s.int64(10));
      out.push_back(std::move(e));
    }
    if (!out.empty()) break;  // the most specific reading that matches wins (no overlap)
  }
  for (auto& e : out) {
    if (auto r = run(e.run.id)) e.run = *r;
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const TestHistoryEntry& a, const TestHistoryEntry& b) { return a.run.id > b.run.id; });
  if (limit > 0 && out.size() > static_cast<std::size_t>(limit)) out.resize(limit);
  return out;
}

std::vector<RunRecord> Store::prunable_runs(int keep, const std::string& older_than,
                                            const std::string& suite) {
  sql::Statement s(db_,
                   "SELECT id FROM (SELECT id, suite, status, started_at, row_number() OVER "
                   "(PARTITION BY suite ORDER BY id DESC) AS newer FROM runs) "
                   "WHERE status <> 'running' AND (?1 = '' OR suite = ?1) "
                   "AND (?2 <= 0 OR newer > ?2) AND (?3 = '' OR started_at < ?3) "
                   "ORDER BY id DESC");
  s.bind(1, suite).bind(2, keep).bind(3, older_than);
  std::vector<std::int64_t> ids;
  while (s.step()) ids.push_back(s.int64(0));
  s.reset();
  // A run kept keeps its baseline run: a differential report needs it.
  std::set<std::int64_t> doomed(ids.begin(), ids.end());
  sql::Statement pairs(db_, "SELECT id, baseline_run FROM runs WHERE baseline_run IS NOT NULL");
  while (pairs.step()) {
    if (doomed.count(pairs.int64(0)) == 0) doomed.erase(pairs.int64(1));
  }
  std::vector<RunRecord> out;
  for (auto it = doomed.rbegin(); it != doomed.rend(); ++it) {
    if (auto r = run(*it)) out.push_back(*r);
  }
  return out;
}

void Store::delete_runs(const std::vector<std::int64_t>& run_ids) {
  if (run_ids.empty()) return;
  sql::Transaction tx(db_);
  sql::Statement unlink_baseline(db_, "UPDATE runs SET baseline_run = NULL WHERE baseline_run = ?");
  sql::Statement unlink_previous(db_, "UPDATE runs SET previous_run = NULL WHERE previous_run = ?");
  sql::Statement del(db_, "DELETE FROM runs WHERE id = ?");
  for (std::int64_t id : run_ids) {
    unlink_baseline.bind(1, id).run();
    unlink_previous.bind(1, id).run();
  }
  // Children first: cases and attempts reference files, which reference runs (all cascade).
  for (std::int64_t id : run_ids) del.bind(1, id).run();
  db_.exec(
      "DELETE FROM signatures WHERE signature NOT IN "
      "(SELECT signature FROM results WHERE signature IS NOT NULL); "
      "DELETE FROM texts WHERE id NOT IN "
      "(SELECT traceback_id FROM results WHERE traceback_id IS NOT NULL "
      "UNION SELECT message_id FROM results WHERE message_id IS NOT NULL); "
      "DELETE FROM tests WHERE id NOT IN (SELECT test_id FROM results); "
      "DELETE FROM classes WHERE id NOT IN (SELECT class_id FROM tests); "
      "DELETE FROM names WHERE id NOT IN (SELECT name_id FROM tests)");
  tx.commit();
}

}  // namespace devshim
