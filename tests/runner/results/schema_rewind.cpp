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
PRAGMA user_version = 11;
COMMIT;
)sql");
}

}  // namespace devshim
