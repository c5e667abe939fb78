// The Store's schema: the migrations that build and upgrade it, version by version (schema:
// docs/database.md). The gap log's tables (gaps, gap_tests) are created here too, in the order
// their versions came; their queries are runner/results/gap_log.cpp's.
#include <fmt/format.h>

#include <array>

#include "base/error.h"
#include "runner/results/store.h"
#include "runner/results/store_identity.h"

namespace devshim {

namespace {

// Each entry migrates the schema from version i to i+1. Append only; never edit a shipped one.
constexpr std::array<const char*, 17> kMigrations = {
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
    // 17: a failing test of a shim run whose failure sits in code that runs only where CUDA is
    // there, by its source (TestCase::fails_in_cuda_branch): with its baseline passing, a
    // CUDA-branch failure, not a regression, though it did no device work before it failed. The
    // cases view shows it too.
    R"sql(
ALTER TABLE results ADD COLUMN cuda_branch INTEGER NOT NULL DEFAULT 0;
DROP VIEW cases;
CREATE VIEW cases AS
  SELECT r.id, f.run_id, r.file_id, k.name AS classname, n.name AS name,
         CASE r.status WHEN 0 THEN 'passed' WHEN 1 THEN 'failed' WHEN 2 THEN 'error'
                       WHEN 3 THEN 'skipped' WHEN 4 THEN 'xfailed' ELSE 'xpassed' END AS status,
         r.duration_s, r.exception, coalesce(r.message, m.text) AS message, r.traceback,
         r.signature, r.source_path, r.source_line, r.culprit, r.flaky, r.traceback_id,
         r.cuda_path, r.cuda_branch
  FROM results r JOIN files f ON f.id = r.file_id JOIN tests t ON t.id = r.test_id
  JOIN classes k ON k.id = t.class_id JOIN names n ON n.id = t.name_id
  LEFT JOIN texts m ON m.id = r.message_id;
)sql",
};

}  // namespace

int Store::schema_version() { return static_cast<int>(kMigrations.size()); }

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

}  // namespace devshim
