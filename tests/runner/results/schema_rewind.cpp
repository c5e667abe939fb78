#include "tests/runner/results/schema_rewind.h"

#include "runner/results/sqlite.h"

namespace devshim {

void rewind_to_schema_11(const std::filesystem::path& path) {
  sql::Database db(path);
  db.exec(R"sql(
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE cases_v11 (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  file_id      INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  classname    TEXT NOT NULL,
  name         TEXT NOT NULL,
  status       TEXT NOT NULL,
  duration_s   REAL,
  exception    TEXT,
  message      TEXT,
  traceback    TEXT,
  signature    TEXT REFERENCES signatures(signature),
  source_path  TEXT,
  source_line  INTEGER,
  culprit      TEXT,
  flaky        INTEGER NOT NULL DEFAULT 0,
  traceback_id INTEGER REFERENCES texts(id)
);
INSERT INTO cases_v11 SELECT id, run_id, file_id, classname, name, status, duration_s, exception,
  message, traceback, signature, source_path, source_line, culprit, flaky, traceback_id FROM cases;
DROP VIEW cases;
DROP TABLE results;
DROP TABLE tests;
DROP TABLE names;
DROP TABLE classes;
ALTER TABLE cases_v11 RENAME TO cases;
CREATE INDEX cases_by_run ON cases(run_id, status);
CREATE INDEX cases_by_file ON cases(file_id);
CREATE INDEX cases_by_test ON cases(classname, name);
CREATE INDEX cases_by_signature ON cases(signature);
CREATE TABLE durations_v11 (
  suite    TEXT NOT NULL,
  path     TEXT NOT NULL,
  avg_s    REAL NOT NULL,
  samples  INTEGER NOT NULL,
  last_run INTEGER NOT NULL,
  PRIMARY KEY (suite, path)
);
INSERT INTO durations_v11 SELECT * FROM durations;
DROP TABLE durations;
ALTER TABLE durations_v11 RENAME TO durations;
CREATE TABLE gaps_v12 (
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
CREATE TABLE gap_tests_v12 (
  id        INTEGER PRIMARY KEY,
  api       TEXT NOT NULL REFERENCES gaps_v12(api) ON DELETE CASCADE,
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  file      TEXT NOT NULL,
  classname TEXT NOT NULL,
  name      TEXT NOT NULL,
  UNIQUE (api, run_id, file, classname, name)
);
INSERT OR IGNORE INTO gaps_v12 SELECT api, kind, status, status_by, severity, severity_by,
  CASE equivalent_by WHEN 'person' THEN equivalent END, CASE action_by WHEN 'person' THEN action END,
  note, why, first_seen_run, last_seen_run, fixed_in_run, first_seen_at, last_seen_at, updated_at
  FROM gaps WHERE kind != 'file_error';
INSERT INTO gap_tests_v12 SELECT id, api, run_id, file, classname, name FROM gap_tests
  WHERE api IN (SELECT api FROM gaps_v12);
DROP TABLE gap_tests;
DROP TABLE gaps;
ALTER TABLE gaps_v12 RENAME TO gaps;
ALTER TABLE gap_tests_v12 RENAME TO gap_tests;
CREATE INDEX gap_tests_by_run ON gap_tests(run_id, api);
PRAGMA user_version = 11;
COMMIT;
)sql");
}

}  // namespace devshim
