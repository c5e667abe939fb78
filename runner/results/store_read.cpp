// The Store's readers: runs, files, cases (with their texts or without: result_statuses),
// test names, redirections.
#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "runner/results/store.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::vector<std::string> json_list(const std::string& text) {
  std::vector<std::string> out;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return out;
  for (const auto& v : j) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

RunRecord read_run(const sql::Statement& s) {
  RunRecord r;
  r.id = s.int64(0);
  r.suite = s.text(1);
  r.suite_file = s.text(2);
  r.framework = s.text(3);
  r.targets = json_list(s.text(4));
  r.command_line = json_list(s.text(5));
  r.mode = s.text(6);
  r.status = s.text(7);
  r.started_at = s.text(8);
  r.finished_at = s.text(9);
  r.host = s.text(10);
  r.project_root = s.text(11);
  r.tests_dir = s.text(12);
  r.project_commit = s.text(13);
  r.out_dir = s.text(14);
  r.jobs = static_cast<int>(s.int64(15));
  r.timeout_s = s.real(16);
  r.runner_pid = s.int64(17);
  r.source_url = s.text(18);
  r.environment = s.text(19);
  r.baseline_run = s.opt_int64(20).value_or(0);
  r.previous_run = s.opt_int64(21).value_or(0);
  r.shard = s.text(22);
  r.shard_plan = s.text(23);
  r.summary = s.text(24);
  r.policy = s.text(25);
  return r;
}

constexpr const char* kRunColumns =
    "id, suite, suite_file, framework, targets, command_line, mode, status, started_at, "
    "finished_at, host, project_root, tests_dir, project_commit, out_dir, jobs, timeout_s, "
    "runner_pid, source_url, environment, baseline_run, previous_run, shard, shard_plan, summary, "
    "policy";

}  // namespace

namespace {

// The columns of a StoredCase, read by stored_case; FROM and WHERE are the caller's.
constexpr const char* kCaseColumns =
    "SELECT f.path, k.name, n.name, r.status, r.duration_s, r.exception, "
    "coalesce(r.message, m.text), coalesce(r.traceback, x.text), r.signature, "
    "r.source_path, r.source_line, r.culprit, r.flaky, r.id, r.test_id, r.cuda_path, "
    "r.cuda_branch "
    "FROM files f JOIN results r ON r.file_id = f.id "
    "JOIN tests t ON t.id = r.test_id JOIN classes k ON k.id = t.class_id "
    "JOIN names n ON n.id = t.name_id "
    "LEFT JOIN texts x ON x.id = r.traceback_id "
    "LEFT JOIN texts m ON m.id = r.message_id ";

StoredCase stored_case(sql::Statement& s) {
  StoredCase sc;
  sc.file = s.text(0);
  TestCase& c = sc.test;
  c.classname = s.text(1);
  c.name = s.text(2);
  c.status = result_status(s.int64(3));
  c.duration_s = s.opt_real(4).value_or(0);
  c.exception = s.text(5);
  c.message = s.text(6);
  c.traceback = s.text(7);
  sc.signature = s.text(8);
  c.source.path = s.text(9);
  c.source.line = static_cast<int>(s.opt_int64(10).value_or(0));
  c.culprit = s.text(11);
  sc.flaky = s.int64(12) != 0;
  sc.result_id = s.int64(13);
  sc.test_id = s.int64(14);
  c.cuda_contact = cuda_contact_of(s.int64(15));
  c.fails_in_cuda_branch = s.int64(16) != 0;
  return sc;
}

}  // namespace

std::vector<StoredCase> Store::cases(std::int64_t run_id) {
  sql::Statement s(db_, std::string(kCaseColumns) + "WHERE f.run_id = ? ORDER BY f.path, r.id");
  s.bind(1, run_id);
  std::vector<StoredCase> out;
  while (s.step()) out.push_back(stored_case(s));
  return out;
}

std::vector<StoredCase> Store::cases_by_id(const std::vector<std::int64_t>& result_ids) {
  sql::Statement s(db_, std::string(kCaseColumns) + "WHERE r.id = ?");
  std::vector<StoredCase> out;
  out.reserve(result_ids.size());
  for (const std::int64_t id : result_ids) {
    s.bind(1, id);
    if (s.step()) out.push_back(stored_case(s));
    s.reset();
  }
  return out;
}

std::map<std::int64_t, std::pair<std::string, std::string>> Store::test_names(
    const std::vector<std::int64_t>& test_ids) {
  sql::Statement s(db_,
                   "SELECT c.name, n.name FROM tests t JOIN classes c ON c.id = t.class_id "
                   "JOIN names n ON n.id = t.name_id WHERE t.id = ?");
  std::map<std::int64_t, std::pair<std::string, std::string>> out;
  for (const std::int64_t id : test_ids) {
    s.bind(1, id);
    if (s.step()) out.emplace(id, std::pair{s.text(0), s.text(1)});
    s.reset();
  }
  return out;
}

RunResultStatuses Store::result_statuses(std::int64_t run_id) {
  RunResultStatuses out;
  std::unordered_map<std::int64_t, std::uint32_t> file_index;  // files.id -> index in out.files
  // Each file's results are one range of ids (a file's results are written together); where
  // the run's ranges fill most of the span from the first to the last, that span is read in id
  // order without an index lookup a row, other runs' results in it skipped.
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  std::int64_t last = std::numeric_limits<std::int64_t>::min();
  std::int64_t covered = 0;
  {
    sql::Statement s(db_,
                     "SELECT f.id, f.path, (SELECT min(id) FROM results WHERE file_id = f.id), "
                     "(SELECT max(id) FROM results WHERE file_id = f.id) FROM files f "
                     "WHERE f.run_id = ? ORDER BY f.path");
    s.bind(1, run_id);
    while (s.step()) {
      if (s.is_null(2)) continue;  // a file without results is not listed
      file_index.emplace(s.int64(0), static_cast<std::uint32_t>(out.files.size()));
      out.files.push_back(s.text(1));
      const std::int64_t lo = s.int64(2);
      const std::int64_t hi = s.int64(3);
      first = std::min(first, lo);
      last = std::max(last, hi);
      covered += hi - lo + 1;
    }
  }
  if (out.files.empty()) return out;
  const bool one_range = last - first + 1 <= 2 * covered;
  sql::Statement s(db_, one_range
                            ? "SELECT file_id, id, test_id, status, flaky, culprit IS NOT NULL, "
                              "signature IS NOT NULL, cuda_path, cuda_branch FROM results "
                              "WHERE id BETWEEN ? AND ?"
                            : "SELECT r.file_id, r.id, r.test_id, r.status, r.flaky, "
                              "r.culprit IS NOT NULL, r.signature IS NOT NULL, r.cuda_path, "
                              "r.cuda_branch "
                              "FROM files f "
                              "JOIN results r ON r.file_id = f.id WHERE f.run_id = ? "
                              "ORDER BY r.id");
  if (one_range) {
    s.bind(1, first).bind(2, last);
  } else {
    s.bind(1, run_id);
  }
  std::vector<RunResultStatuses::Row> rows;  // in id order
  while (s.step()) {
    auto file = file_index.find(s.int64(0));
    if (file == file_index.end()) continue;  // another run's result inside the range
    rows.push_back({.result_id = s.int64(1),
                    .test_id = s.int64(2),
                    .file = file->second,
                    .status = result_status(s.int64(3)),
                    .flaky = s.int64(4) != 0,
                    .culprit = s.int64(5) != 0,
                    .signature = s.int64(6) != 0,
                    .cuda_contact = cuda_contact_of(s.int64(7)),
                    .fails_in_cuda_branch = s.int64(8) != 0});
  }
  // By file path, then id (cases' order): a counting sort by file keeps the id order.
  std::vector<std::size_t> start(out.files.size() + 1, 0);
  for (const auto& row : rows) ++start[row.file + 1];
  for (std::size_t f = 0; f < out.files.size(); ++f) start[f + 1] += start[f];
  out.rows.resize(rows.size());
  for (const auto& row : rows) out.rows[start[row.file]++] = row;
  return out;
}

std::vector<RunRedirection> Store::redirections(std::int64_t run_id) {
  // The first call site of each kind is the one of its lowest row id.
  sql::Statement s(db_,
                   "SELECT g.shim, g.api, g.requested, g.used, g.calls, g.files, g.sites, "
                   "f.site_path, f.site_line, f.site_function FROM ("
                   "  SELECT shim, api, requested, used, SUM(count) AS calls, "
                   "  COUNT(DISTINCT file_id) AS files, COUNT(*) AS sites, MIN(id) AS first_id "
                   "  FROM redirections WHERE run_id = ? GROUP BY shim, api, requested, used) g "
                   "JOIN redirections f ON f.id = g.first_id "
                   "ORDER BY g.calls DESC, g.api, g.requested, g.used");
  s.bind(1, run_id);
  std::vector<RunRedirection> out;
  while (s.step()) {
    RunRedirection r;
    r.first.shim = s.text(0);
    r.first.api = s.text(1);
    r.first.requested = s.text(2);
    r.first.used = s.text(3);
    r.count = s.int64(4);
    r.first.count = r.count;
    r.files = static_cast<int>(s.int64(5));
    r.sites = static_cast<int>(s.int64(6));
    r.first.site_file = s.text(7);
    r.first.site_line = static_cast<int>(s.opt_int64(8).value_or(0));
    r.first.site_function = s.text(9);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RunRecord> Store::runs(int limit) {
  sql::Statement s(db_, fmt::format("SELECT {} FROM runs ORDER BY id DESC LIMIT ?", kRunColumns));
  s.bind(1, limit);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::optional<RunRecord> Store::run(std::int64_t run_id) {
  sql::Statement s(db_, fmt::format("SELECT {} FROM runs WHERE id = ?", kRunColumns));
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

std::vector<RunRecord> Store::runs_naming(std::int64_t run_id) {
  sql::Statement s(db_, fmt::format("SELECT {} FROM runs WHERE previous_run = ?1 OR "
                                    "baseline_run = ?1 ORDER BY id",
                                    kRunColumns));
  s.bind(1, run_id);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

RunRecord Store::resolve_run(const std::string& spec) {
  std::int64_t id = 0;
  if (spec.empty() || spec == "latest") {
    auto newest = runs(1);
    if (newest.empty()) throw UsageError("no runs recorded in " + path().string());
    return newest[0];
  }
  if (spec.starts_with("latest~")) {
    int back = 0;
    const char* n = spec.data() + 7;
    auto [end, ec] = std::from_chars(n, spec.data() + spec.size(), back);
    if (ec == std::errc() && end == spec.data() + spec.size() && back >= 0 && back < 100000) {
      auto newest = runs(back + 1);
      if (static_cast<int>(newest.size()) <= back) {
        throw UsageError(fmt::format("{}: {} has only {} run{}", spec, path().string(),
                                     newest.size(), newest.size() == 1 ? "" : "s"));
      }
      return newest[back];
    }
  }
  auto [end, ec] = std::from_chars(spec.data(), spec.data() + spec.size(), id);
  if (ec != std::errc() || end != spec.data() + spec.size()) {
    throw UsageError(fmt::format(
        "\"{}\" is not a run id (a number, \"latest\", or \"latest~N\": N runs before it)", spec));
  }
  auto r = run(id);
  if (!r) throw UsageError(fmt::format("no run {} in {}", id, path().string()));
  return *r;
}

std::map<std::string, int> Store::file_status_counts(std::int64_t run_id) {
  sql::Statement s(db_,
                   "SELECT COALESCE(status, 'not_run'), COUNT(*) FROM files WHERE run_id = ? "
                   "GROUP BY 1");
  s.bind(1, run_id);
  std::map<std::string, int> out;
  while (s.step()) out[s.text(0)] = static_cast<int>(s.int64(1));
  return out;
}

std::vector<FileRecord> Store::files(std::int64_t run_id) {
  sql::Statement s(db_,
                   "SELECT path, status, exit_code, signal, timed_out, duration_s, log_path, "
                   "started_at, finished_at, note, parsed_from, reported FROM files "
                   "WHERE run_id = ? ORDER BY path");
  s.bind(1, run_id);
  std::vector<FileRecord> out;
  while (s.step()) {
    FileRecord f;
    f.path = s.text(0);
    if (auto st = s.opt_text(1)) f.status = parse_file_status(*st);
    if (auto v = s.opt_int64(2)) f.exit_code = static_cast<int>(*v);
    if (auto v = s.opt_int64(3)) f.signal = static_cast<int>(*v);
    f.timed_out = s.int64(4) != 0;
    f.duration_s = s.opt_real(5).value_or(0);
    f.log_path = s.text(6);
    f.started_at = s.text(7);
    f.finished_at = s.text(8);
    f.note = s.text(9);
    f.parsed_from = s.text(10);
    if (auto reported = s.opt_text(11)) {
      json r = json::parse(*reported, nullptr, /*allow_exceptions=*/false);
      if (r.is_object()) {
        f.reported.present = true;
        if (r.contains("ran")) f.reported.ran = r.value("ran", 0);
        f.reported.passed = r.value("passed", 0);
        f.reported.failed = r.value("failed", 0);
        f.reported.errors = r.value("errors", 0);
        f.reported.skipped = r.value("skipped", 0);
        f.reported.xfailed = r.value("xfailed", 0);
        f.reported.xpassed = r.value("xpassed", 0);
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace devshim
