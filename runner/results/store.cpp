#include "runner/results/store.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "parsers/line_reader.h"
#include "parsers/signature.h"
#include "runner/results/store_identity.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Each entry migrates the schema from version i to i+1. Append only; never edit a shipped one.
constexpr std::array<const char*, 16> kMigrations = {
    R"sql(
CREATE TABLE runs (
  id             INTEGER PRIMARY KEY,
  suite          TEXT NOT NULL,
  suite_file     TEXT NOT NULL,
  framework      TEXT NOT NULL,
  targets        TEXT NOT NULL,          -- JSON list
  command_line   TEXT NOT NULL,          -- JSON list (argv)
  mode           TEXT NOT NULL CHECK (mode IN ('shim', 'baseline')),
  status         TEXT NOT NULL CHECK (status IN ('running', 'passed', 'failed', 'interrupted')),
  started_at     TEXT NOT NULL,
  finished_at    TEXT,
  host           TEXT NOT NULL,
  project_root   TEXT NOT NULL,
  tests_dir      TEXT NOT NULL,
  project_commit TEXT,
  out_dir        TEXT NOT NULL,
  jobs           INTEGER NOT NULL,
  timeout_s      REAL NOT NULL,
  runner_pid     INTEGER NOT NULL
);
CREATE TABLE files (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  path        TEXT NOT NULL,
  status      TEXT CHECK (status IN ('passed', 'failed', 'error', 'timeout', 'crashed',
                                     'no_tests', 'interrupted')),
  exit_code   INTEGER,
  signal      INTEGER,
  timed_out   INTEGER NOT NULL DEFAULT 0,
  duration_s  REAL,
  log_path    TEXT,
  started_at  TEXT,
  finished_at TEXT,
  note        TEXT,
  UNIQUE (run_id, path)
);
CREATE INDEX files_by_path ON files(path, run_id);
CREATE INDEX runs_by_suite ON runs(suite, started_at);
)sql",
    // 2: per-test results and failure signatures (parsers/).
    R"sql(
ALTER TABLE files ADD COLUMN parsed_from TEXT;     -- 'junit', 'log' or NULL (nothing parsed)
ALTER TABLE files ADD COLUMN reported TEXT;        -- JSON: the framework's own closing counts
CREATE TABLE signatures (
  signature      TEXT PRIMARY KEY,                 -- 16 hex digits (parsers/signature.h)
  exception      TEXT NOT NULL,
  message        TEXT NOT NULL,                    -- normalised message
  example        TEXT NOT NULL,                    -- one real message
  first_seen_run INTEGER NOT NULL,
  last_seen_run  INTEGER NOT NULL
);
CREATE TABLE cases (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  file_id     INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  classname   TEXT NOT NULL,
  name        TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'error', 'skipped', 'xfailed',
                                              'xpassed')),
  duration_s  REAL,
  exception   TEXT,
  message     TEXT,
  traceback   TEXT,
  signature   TEXT REFERENCES signatures(signature),
  source_path TEXT,
  source_line INTEGER,
  culprit     TEXT CHECK (culprit IN ('crashed', 'timeout', 'interrupted'))
);
CREATE INDEX cases_by_run ON cases(run_id, status);
CREATE INDEX cases_by_file ON cases(file_id);
CREATE INDEX cases_by_test ON cases(classname, name);
CREATE INDEX cases_by_signature ON cases(signature);
)sql",
    // 3: what reports need to say about a run.
    R"sql(
ALTER TABLE runs ADD COLUMN source_url TEXT;       -- suite.json's template for upstream links
ALTER TABLE runs ADD COLUMN environment TEXT;      -- JSON: the suite interpreter's probe, cores
)sql",
    // 4: differential runs: a shim run names the baseline (shim off) run it is compared with.
    R"sql(
ALTER TABLE runs ADD COLUMN baseline_run INTEGER REFERENCES runs(id);
)sql",
    // 5: the shims' redirection records (runner/results/redirection_record.h), one row per entry.
    R"sql(
CREATE TABLE redirections (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  file_id       INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  shim          TEXT NOT NULL,                     -- 'python' or 'cpp'
  api           TEXT NOT NULL,
  requested     TEXT NOT NULL,
  used          TEXT NOT NULL,
  count         INTEGER NOT NULL CHECK (count > 0),
  site_path     TEXT,                              -- first call site; relative to the project
  site_line     INTEGER,
  site_function TEXT
);
CREATE INDEX redirections_by_run ON redirections(run_id, api);
CREATE INDEX redirections_by_file ON redirections(file_id);
)sql",
    // 6: nightly: the run compared with, shards, flaky tests' attempts, durations for scheduling.
    R"sql(
ALTER TABLE runs ADD COLUMN previous_run INTEGER REFERENCES runs(id) ON DELETE SET NULL;
ALTER TABLE runs ADD COLUMN shard TEXT;            -- '2/4' for --shard; NULL otherwise
ALTER TABLE runs ADD COLUMN shard_plan TEXT;       -- fingerprint of the whole shard assignment
ALTER TABLE cases ADD COLUMN flaky INTEGER NOT NULL DEFAULT 0;
CREATE TABLE attempts (
  id         INTEGER PRIMARY KEY,
  run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  file_id    INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  classname  TEXT NOT NULL,
  name       TEXT NOT NULL,
  attempt    INTEGER NOT NULL CHECK (attempt >= 1),  -- 1: the first run; 2...: reruns
  status     TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'error', 'skipped', 'xfailed',
                                             'xpassed')),
  message    TEXT,
  UNIQUE (file_id, classname, name, attempt)
);
CREATE INDEX attempts_by_run ON attempts(run_id);
CREATE TABLE durations (
  suite    TEXT NOT NULL,
  path     TEXT NOT NULL,                          -- files.path
  avg_s    REAL NOT NULL,                          -- running average of files.duration_s
  samples  INTEGER NOT NULL,
  last_run INTEGER NOT NULL,                       -- the run that last updated it
  PRIMARY KEY (suite, path)
);
)sql",
    // 7: the API gap log (runner/results/gap_log.h): one row per torch API; the tests that showed
    // it.
    R"sql(
CREATE TABLE gaps (
  api            TEXT PRIMARY KEY,
  kind           TEXT NOT NULL CHECK (kind IN ('failing', 'unpatched', 'unsupported_op',
                                               'cuda_only')),
  status         TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'fixed', 'wontfix')),
  status_by      TEXT NOT NULL DEFAULT 'auto' CHECK (status_by IN ('auto', 'person')),
  severity       TEXT NOT NULL DEFAULT 'low' CHECK (severity IN ('critical', 'high', 'medium',
                                                                 'low')),
  severity_by    TEXT NOT NULL DEFAULT 'auto' CHECK (severity_by IN ('auto', 'person')),
  equivalent     TEXT,
  action         TEXT,
  note           TEXT,
  why            TEXT,
  first_seen_run INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  last_seen_run  INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  fixed_in_run   INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  first_seen_at  TEXT NOT NULL,
  last_seen_at   TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);
CREATE TABLE gap_tests (
  id        INTEGER PRIMARY KEY,
  api       TEXT NOT NULL REFERENCES gaps(api) ON DELETE CASCADE,
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  file      TEXT NOT NULL,
  classname TEXT NOT NULL,
  name      TEXT NOT NULL,
  UNIQUE (api, run_id, file, classname, name)
);
CREATE INDEX gap_tests_by_run ON gap_tests(run_id, api);
)sql",
    // 8: repeated tracebacks stored once (texts); cases rebuilt with its CHECKs as comparisons,
    // which SQLite evaluates without building a temporary table of the IN list for every row.
    R"sql(
CREATE TABLE texts (
  id   INTEGER PRIMARY KEY,
  hash INTEGER NOT NULL UNIQUE,                    -- 64-bit FNV-1a of text
  text TEXT NOT NULL
);
CREATE TABLE cases_v8 (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  file_id      INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  classname    TEXT NOT NULL,
  name         TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status = 'passed' OR status = 'failed' OR status = 'error'
                                    OR status = 'skipped' OR status = 'xfailed'
                                    OR status = 'xpassed'),
  duration_s   REAL,
  exception    TEXT,
  message      TEXT,
  traceback    TEXT,                               -- NULL when traceback_id names it
  signature    TEXT REFERENCES signatures(signature),
  source_path  TEXT,
  source_line  INTEGER,
  culprit      TEXT CHECK (culprit = 'crashed' OR culprit = 'timeout'
                           OR culprit = 'interrupted'),
  flaky        INTEGER NOT NULL DEFAULT 0,
  traceback_id INTEGER REFERENCES texts(id)
);
INSERT INTO cases_v8 (id, run_id, file_id, classname, name, status, duration_s, exception,
                      message, traceback, signature, source_path, source_line, culprit, flaky)
  SELECT id, run_id, file_id, classname, name, status, duration_s, exception, message,
         traceback, signature, source_path, source_line, culprit, flaky FROM cases;
DROP TABLE cases;
ALTER TABLE cases_v8 RENAME TO cases;
CREATE INDEX cases_by_run ON cases(run_id, status);
CREATE INDEX cases_by_file ON cases(file_id);
CREATE INDEX cases_by_test ON cases(classname, name);
CREATE INDEX cases_by_signature ON cases(signature);
)sql",
    // 9: gap kinds for every failing or newly skipped test of a shim run (docs/gaps.md):
    // unattributed, newly_skipped, masquerade_skip. gaps is rebuilt for its CHECK; gap_tests with
    // it, dropped first, so that dropping the old gaps cascades into nothing.
    R"sql(
CREATE TABLE gaps_v9 (
  api            TEXT PRIMARY KEY,
  kind           TEXT NOT NULL CHECK (kind IN ('failing', 'unpatched', 'unsupported_op',
                                               'cuda_only', 'unattributed', 'newly_skipped',
                                               'masquerade_skip')),
  status         TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'fixed', 'wontfix')),
  status_by      TEXT NOT NULL DEFAULT 'auto' CHECK (status_by IN ('auto', 'person')),
  severity       TEXT NOT NULL DEFAULT 'low' CHECK (severity IN ('critical', 'high', 'medium',
                                                                 'low')),
  severity_by    TEXT NOT NULL DEFAULT 'auto' CHECK (severity_by IN ('auto', 'person')),
  equivalent     TEXT,
  action         TEXT,
  note           TEXT,
  why            TEXT,
  first_seen_run INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  last_seen_run  INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  fixed_in_run   INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  first_seen_at  TEXT NOT NULL,
  last_seen_at   TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);
CREATE TABLE gap_tests_v9 (
  id        INTEGER PRIMARY KEY,
  api       TEXT NOT NULL REFERENCES gaps_v9(api) ON DELETE CASCADE,
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  file      TEXT NOT NULL,
  classname TEXT NOT NULL,
  name      TEXT NOT NULL,
  UNIQUE (api, run_id, file, classname, name)
);
INSERT INTO gaps_v9 SELECT * FROM gaps;
INSERT INTO gap_tests_v9 SELECT * FROM gap_tests;
DROP TABLE gap_tests;
DROP TABLE gaps;
ALTER TABLE gaps_v9 RENAME TO gaps;
ALTER TABLE gap_tests_v9 RENAME TO gap_tests;
CREATE INDEX gap_tests_by_run ON gap_tests(run_id, api);
)sql",
    // 10: what each run's report counted (tests, pass rate, new failures, ...), so that lists of
    // runs need not rebuild their reports.
    R"sql(
ALTER TABLE runs ADD COLUMN summary TEXT;          -- JSON (reports/report.h, run_summary)
)sql",
    // 11: the shim's policy of a shim run, part of what makes two runs comparable.
    R"sql(
ALTER TABLE runs ADD COLUMN policy TEXT;           -- TORCHDEVICE_POLICY; NULL for baseline runs
)sql",
    // 12: a test's identity stored once (tests: its class and its name, each stored once in
    // classes and names, as most test names recur in many classes) and each result naming it
    // (results): cases' class name and test name were 59 % of a database, written in every row
    // and again in cases_by_test. A result reaches its run through its file, and its status is a
    // code (kResultStatusCodes; 1 byte, not the word); repeated messages go to texts like
    // tracebacks. cases stays, as a view with its old columns, for readers and the queries in
    // docs/database.md. durations is rebuilt WITHOUT ROWID (its key was stored twice).
    R"sql(
CREATE TABLE classes (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
CREATE TABLE names (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
CREATE TABLE tests (
  id       INTEGER PRIMARY KEY,
  class_id INTEGER NOT NULL REFERENCES classes(id),
  name_id  INTEGER NOT NULL REFERENCES names(id),
  UNIQUE (class_id, name_id)
);
CREATE TABLE results (
  id           INTEGER PRIMARY KEY,
  file_id      INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  test_id      INTEGER NOT NULL REFERENCES tests(id),
  status       INTEGER NOT NULL CHECK (status >= 0 AND status <= 5),  -- passed 0, failed 1,
                                                   -- error 2, skipped 3, xfailed 4, xpassed 5
  duration_s   REAL,
  exception    TEXT,
  message      TEXT,                               -- NULL when message_id names it
  traceback    TEXT,                               -- NULL when traceback_id names it
  signature    TEXT REFERENCES signatures(signature),
  source_path  TEXT,
  source_line  INTEGER,
  culprit      TEXT CHECK (culprit = 'crashed' OR culprit = 'timeout'
                           OR culprit = 'interrupted'),
  flaky        INTEGER NOT NULL DEFAULT 0,
  traceback_id INTEGER REFERENCES texts(id),
  message_id   INTEGER REFERENCES texts(id)
);
INSERT INTO classes (name) SELECT DISTINCT classname FROM cases ORDER BY classname;
INSERT INTO names (name) SELECT DISTINCT name FROM cases ORDER BY name;
INSERT INTO tests (class_id, name_id)
  SELECT DISTINCT k.id, n.id FROM cases c JOIN classes k ON k.name = c.classname
  JOIN names n ON n.name = c.name ORDER BY k.id, n.id;
INSERT INTO results (id, file_id, test_id, status, duration_s, exception, message, traceback,
                     signature, source_path, source_line, culprit, flaky, traceback_id)
  SELECT c.id, c.file_id, t.id,
         CASE c.status WHEN 'passed' THEN 0 WHEN 'failed' THEN 1 WHEN 'error' THEN 2
                       WHEN 'skipped' THEN 3 WHEN 'xfailed' THEN 4 ELSE 5 END,
         c.duration_s, c.exception, c.message, c.traceback, c.signature, c.source_path,
         c.source_line, c.culprit, c.flaky, c.traceback_id
  FROM cases c JOIN classes k ON k.name = c.classname JOIN names n ON n.name = c.name
  JOIN tests t ON t.class_id = k.id AND t.name_id = n.id;
DROP TABLE cases;
CREATE INDEX results_by_file ON results(file_id);
CREATE INDEX results_by_test ON results(test_id);
CREATE INDEX results_by_signature ON results(signature) WHERE signature IS NOT NULL;
CREATE VIEW cases AS
  SELECT r.id, f.run_id, r.file_id, k.name AS classname, n.name AS name,
         CASE r.status WHEN 0 THEN 'passed' WHEN 1 THEN 'failed' WHEN 2 THEN 'error'
                       WHEN 3 THEN 'skipped' WHEN 4 THEN 'xfailed' ELSE 'xpassed' END AS status,
         r.duration_s, r.exception, coalesce(r.message, m.text) AS message, r.traceback,
         r.signature, r.source_path, r.source_line, r.culprit, r.flaky, r.traceback_id
  FROM results r JOIN files f ON f.id = r.file_id JOIN tests t ON t.id = r.test_id
  JOIN classes k ON k.id = t.class_id JOIN names n ON n.id = t.name_id
  LEFT JOIN texts m ON m.id = r.message_id;
CREATE TABLE durations_v12 (
  suite    TEXT NOT NULL,
  path     TEXT NOT NULL,                          -- files.path
  avg_s    REAL NOT NULL,                          -- running average of files.duration_s
  samples  INTEGER NOT NULL,
  last_run INTEGER NOT NULL,                       -- the run that last updated it
  PRIMARY KEY (suite, path)
) WITHOUT ROWID;                                   -- the key stored once, not again in an index
INSERT INTO durations_v12 SELECT suite, path, avg_s, samples, last_run FROM durations;
DROP TABLE durations;
ALTER TABLE durations_v12 RENAME TO durations;
)sql",
    // 13: what to do about each gap (docs/gaps.md): the kind file_error, actions and equivalents
    // the runs write unless a person set them (action_by, equivalent_by; an action or equivalent
    // stored before was a person's), the documented shim setting that may fix an entry, and the
    // trial of that setting (--try-settings). gaps is rebuilt for its CHECK, as in migration 9.
    R"sql(
CREATE TABLE gaps_v13 (
  api            TEXT PRIMARY KEY,
  kind           TEXT NOT NULL CHECK (kind IN ('failing', 'unpatched', 'unsupported_op',
                                               'cuda_only', 'unattributed', 'newly_skipped',
                                               'masquerade_skip', 'file_error')),
  status         TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'fixed', 'wontfix')),
  status_by      TEXT NOT NULL DEFAULT 'auto' CHECK (status_by IN ('auto', 'person')),
  severity       TEXT NOT NULL DEFAULT 'low' CHECK (severity IN ('critical', 'high', 'medium',
                                                                 'low')),
  severity_by    TEXT NOT NULL DEFAULT 'auto' CHECK (severity_by IN ('auto', 'person')),
  equivalent     TEXT,
  action         TEXT,
  note           TEXT,
  why            TEXT,
  first_seen_run INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  last_seen_run  INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  fixed_in_run   INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  first_seen_at  TEXT NOT NULL,
  last_seen_at   TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  action_by      TEXT NOT NULL DEFAULT 'auto' CHECK (action_by IN ('auto', 'person')),
  equivalent_by  TEXT NOT NULL DEFAULT 'auto' CHECK (equivalent_by IN ('auto', 'person')),
  setting        TEXT,                             -- 'VAR=value' that may fix it; NULL: none
  trial_setting  TEXT,                             -- the setting --try-settings ran
  trial_run      INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  trial_tests    INTEGER,                          -- affected tests the trial ran
  trial_passed   INTEGER                           -- of them, how many passed with the setting
);
CREATE TABLE gap_tests_v13 (
  id        INTEGER PRIMARY KEY,
  api       TEXT NOT NULL REFERENCES gaps_v13(api) ON DELETE CASCADE,
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  file      TEXT NOT NULL,
  classname TEXT NOT NULL,
  name      TEXT NOT NULL,
  UNIQUE (api, run_id, file, classname, name)
);
INSERT INTO gaps_v13 (api, kind, status, status_by, severity, severity_by, equivalent, action,
                      note, why, first_seen_run, last_seen_run, fixed_in_run, first_seen_at,
                      last_seen_at, updated_at, action_by, equivalent_by)
  SELECT api, kind, status, status_by, severity, severity_by, equivalent, action, note, why,
         first_seen_run, last_seen_run, fixed_in_run, first_seen_at, last_seen_at, updated_at,
         CASE WHEN coalesce(action, '') = '' THEN 'auto' ELSE 'person' END,
         CASE WHEN coalesce(equivalent, '') = '' THEN 'auto' ELSE 'person' END
  FROM gaps;
INSERT INTO gap_tests_v13 SELECT * FROM gap_tests;
DROP TABLE gap_tests;
DROP TABLE gaps;
ALTER TABLE gaps_v13 RENAME TO gaps;
ALTER TABLE gap_tests_v13 RENAME TO gap_tests;
CREATE INDEX gap_tests_by_run ON gap_tests(run_id, api);
)sql",
    // 14: a test that a run of other targets did not run stays an entry's test, carried from the
    // run that last showed it (GapLog::update_from_run).
    R"sql(
ALTER TABLE gap_tests ADD COLUMN carried_from INTEGER;
)sql",
    // 15: whether a test took a CUDA path by the shim's own account: its redirection record named
    // it (a redirected device request or a masqueraded torch.cuda call while it ran). The cases
    // view shows it too.
    R"sql(
ALTER TABLE results ADD COLUMN cuda_path INTEGER NOT NULL DEFAULT 0;
DROP VIEW cases;
CREATE VIEW cases AS
  SELECT r.id, f.run_id, r.file_id, k.name AS classname, n.name AS name,
         CASE r.status WHEN 0 THEN 'passed' WHEN 1 THEN 'failed' WHEN 2 THEN 'error'
                       WHEN 3 THEN 'skipped' WHEN 4 THEN 'xfailed' ELSE 'xpassed' END AS status,
         r.duration_s, r.exception, coalesce(r.message, m.text) AS message, r.traceback,
         r.signature, r.source_path, r.source_line, r.culprit, r.flaky, r.traceback_id,
         r.cuda_path
  FROM results r JOIN files f ON f.id = r.file_id JOIN tests t ON t.id = r.test_id
  JOIN classes k ON k.id = t.class_id JOIN names n ON n.id = t.name_id
  LEFT JOIN texts m ON m.id = r.message_id;
)sql",
    // 16: the gap log per suite: an entry belongs to the suite whose runs showed it (suite ''
    // for torch's surface, `runner gaps scan`, and for a person's entry of no suite), so that a
    // run of one suite never changes another's entries; and the kind environment, for what fails
    // the same way without the shim. An entry is split into one per suite its tests were seen in,
    // each with the runs of that suite (an entry whose last sighting was another suite's is open
    // again unless a person set its status); gaps is rebuilt for its key and CHECK.
    R"sql(
CREATE TABLE gaps_v16 (
  suite          TEXT NOT NULL DEFAULT '',
  api            TEXT NOT NULL,
  kind           TEXT NOT NULL CHECK (kind IN ('failing', 'unpatched', 'unsupported_op',
                                               'cuda_only', 'unattributed', 'newly_skipped',
                                               'masquerade_skip', 'file_error', 'environment')),
  status         TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'fixed', 'wontfix')),
  status_by      TEXT NOT NULL DEFAULT 'auto' CHECK (status_by IN ('auto', 'person')),
  severity       TEXT NOT NULL DEFAULT 'low' CHECK (severity IN ('critical', 'high', 'medium',
                                                                 'low')),
  severity_by    TEXT NOT NULL DEFAULT 'auto' CHECK (severity_by IN ('auto', 'person')),
  equivalent     TEXT,
  action         TEXT,
  note           TEXT,
  why            TEXT,
  first_seen_run INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  last_seen_run  INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  fixed_in_run   INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  first_seen_at  TEXT NOT NULL,
  last_seen_at   TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  action_by      TEXT NOT NULL DEFAULT 'auto' CHECK (action_by IN ('auto', 'person')),
  equivalent_by  TEXT NOT NULL DEFAULT 'auto' CHECK (equivalent_by IN ('auto', 'person')),
  setting        TEXT,
  trial_setting  TEXT,
  trial_run      INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  trial_tests    INTEGER,
  trial_passed   INTEGER,
  PRIMARY KEY (suite, api)
);
CREATE TABLE gap_tests_v16 (
  id           INTEGER PRIMARY KEY,
  suite        TEXT NOT NULL DEFAULT '',
  api          TEXT NOT NULL,
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  file         TEXT NOT NULL,
  classname    TEXT NOT NULL,
  name         TEXT NOT NULL,
  carried_from INTEGER,
  UNIQUE (suite, api, run_id, file, classname, name),
  FOREIGN KEY (suite, api) REFERENCES gaps_v16(suite, api) ON DELETE CASCADE
);
WITH seen AS (
  SELECT t.api, r.suite, MIN(t.run_id) AS first_run, MAX(t.run_id) AS last_run
  FROM gap_tests t JOIN runs r ON r.id = t.run_id GROUP BY t.api, r.suite)
INSERT INTO gaps_v16
  SELECT s.suite, g.api, g.kind,
         CASE WHEN g.last_seen_run = s.last_run OR g.status_by = 'person' THEN g.status
              ELSE 'open' END,
         g.status_by, g.severity, g.severity_by, g.equivalent, g.action, g.note, g.why,
         s.first_run, s.last_run,
         CASE WHEN g.last_seen_run = s.last_run THEN g.fixed_in_run END,
         coalesce((SELECT started_at FROM runs WHERE id = s.first_run), g.first_seen_at),
         coalesce((SELECT started_at FROM runs WHERE id = s.last_run), g.last_seen_at),
         g.updated_at, g.action_by, g.equivalent_by, g.setting,
         CASE WHEN g.last_seen_run = s.last_run THEN g.trial_setting END,
         CASE WHEN g.last_seen_run = s.last_run THEN g.trial_run END,
         CASE WHEN g.last_seen_run = s.last_run THEN g.trial_tests END,
         CASE WHEN g.last_seen_run = s.last_run THEN g.trial_passed END
  FROM gaps g JOIN seen s ON s.api = g.api;
INSERT INTO gaps_v16
  SELECT '', g.* FROM gaps g WHERE g.api NOT IN (SELECT api FROM gap_tests);
INSERT INTO gap_tests_v16
  SELECT t.id, r.suite, t.api, t.run_id, t.file, t.classname, t.name, t.carried_from
  FROM gap_tests t JOIN runs r ON r.id = t.run_id;
DROP TABLE gap_tests;
DROP TABLE gaps;
ALTER TABLE gaps_v16 RENAME TO gaps;
ALTER TABLE gap_tests_v16 RENAME TO gap_tests;
CREATE INDEX gap_tests_by_run ON gap_tests(run_id, suite, api);
)sql",
};

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

// results.status: a stable code per status (migration 12 and the cases view spell it out).
constexpr std::array<std::pair<CaseStatus, int>, 6> kResultStatusCodes{{
    {CaseStatus::kPassed, 0},
    {CaseStatus::kFailed, 1},
    {CaseStatus::kError, 2},
    {CaseStatus::kSkipped, 3},
    {CaseStatus::kXfailed, 4},
    {CaseStatus::kXpassed, 5},
}};

std::string host_name() {
  std::array<char, 256> buf{};
  if (::gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

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

namespace {

json parsed_environment(const RunRecord& run) {
  return json::parse(run.environment.empty() ? "{}" : run.environment, nullptr, false);
}

}  // namespace

RunVersions run_versions(const RunRecord& run) {
  return run_versions(run, parsed_environment(run));
}

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

std::string start_mode(const RunRecord& run) { return start_mode(parsed_environment(run)); }

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

std::string iso8601_utc_now() { return iso8601_utc(std::chrono::system_clock::now()); }

std::string local_stamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y%m%d-%H%M%S", &tm);
  return buf.data();
}

int Store::schema_version() { return static_cast<int>(kMigrations.size()); }

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

int Store::stored_schema_version() {
  sql::Statement v(db_, "PRAGMA user_version");
  v.step();
  const int version = static_cast<int>(v.int64(0));
  if (version > schema_version()) {
    throw RuntimeError(fmt::format(
        "{}: database schema version {} is newer than this runner's ({}); use a newer runner",
        db_.path().string(), version, schema_version()));
  }
  return version;
}

void Store::migrate() {
  auto application_id = [this] {
    sql::Statement s(db_, "PRAGMA application_id");
    return s.step() ? s.int64(0) : 0;
  };
  if (stored_schema_version() == schema_version() && application_id() == kApplicationId) return;
  sql::Transaction tx(db_);
  // Again under the write lock: another runner may have migrated it while this one waited.
  const int version = stored_schema_version();
  for (int i = version; i < schema_version(); ++i) db_.exec(kMigrations[i]);
  // The identity too: a database made before devshim stamped its own gets it here.
  db_.exec(fmt::format("PRAGMA user_version = {}; PRAGMA application_id = {}", schema_version(),
                       kApplicationId));
  tx.commit();
}

void Store::mark_stale_runs_interrupted() {
  const std::vector<std::int64_t> stale = stale_runs(db_);
  if (stale.empty()) return;
  sql::Transaction tx(db_);
  sql::Statement u(db_, "UPDATE runs SET status = 'interrupted' WHERE id = ?");
  for (auto id : stale) u.bind(1, id).run();
  tx.commit();
}

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
    "signature, source_path, source_line, culprit, traceback_id, message_id, cuda_path) VALUES";

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
    r.cuda_path = c.cuda_path ? 1 : 0;
    pending_.push_back(std::move(r));
    if (pending_.size() == kResultBatch) write_pending();
  }
}

// Binds one row of results' 14 columns at parameters first + 1 ... first + 14.
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
      .bind(first + 14, r.cuda_path);
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

namespace {

// The columns of a StoredCase, read by stored_case; FROM and WHERE are the caller's.
constexpr const char* kCaseColumns =
    "SELECT f.path, k.name, n.name, r.status, r.duration_s, r.exception, "
    "coalesce(r.message, m.text), coalesce(r.traceback, x.text), r.signature, "
    "r.source_path, r.source_line, r.culprit, r.flaky, r.id, r.test_id, r.cuda_path "
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
  c.cuda_path = s.int64(15) != 0;
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
                              "signature IS NOT NULL, cuda_path FROM results "
                              "WHERE id BETWEEN ? AND ?"
                            : "SELECT r.file_id, r.id, r.test_id, r.status, r.flaky, "
                              "r.culprit IS NOT NULL, r.signature IS NOT NULL, r.cuda_path "
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
                    .cuda_path = s.int64(7) != 0});
  }
  // By file path, then id (cases' order): a counting sort by file keeps the id order.
  std::vector<std::size_t> start(out.files.size() + 1, 0);
  for (const auto& row : rows) ++start[row.file + 1];
  for (std::size_t f = 0; f < out.files.size(); ++f) start[f + 1] += start[f];
  out.rows.resize(rows.size());
  for (const auto& row : rows) out.rows[start[row.file]++] = row;
  return out;
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
