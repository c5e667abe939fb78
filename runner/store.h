// The results store: one SQLite file that accumulates runs (schema: docs/database.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "parsers/test_result.h"
#include "runner/redirection_record.h"
#include "runner/sqlite.h"
#include "runner/status.h"

namespace devshim {

/// Run status: "running" while a runner works on it, then "passed", "failed" or "interrupted".
struct RunRecord {
  std::int64_t id = 0;
  std::string suite;
  std::string suite_file;
  std::string framework;
  std::vector<std::string> targets;
  std::vector<std::string> command_line;
  std::string mode = "shim";  ///< "shim" or "baseline"
  std::string status = "running";
  std::string started_at;   ///< ISO 8601 UTC
  std::string finished_at;  ///< empty while running
  std::string host;
  std::string project_root;
  std::string tests_dir;
  std::string project_commit;  ///< empty when the project is not a git checkout
  std::string out_dir;
  int jobs = 1;
  double timeout_s = 0;
  std::int64_t runner_pid = 0;
  std::string source_url;         ///< suite.json's source_url template ({commit}, {path}, {line})
  std::string environment;        ///< JSON object: the suite interpreter's versions, cores, ...
  std::int64_t baseline_run = 0;  ///< shim runs of --differential: the baseline run; 0: none
};

/// One test file of a run. status is empty until the file has finished ("not run").
struct FileRecord {
  std::string path;  ///< relative to the suite's tests folder
  std::optional<FileStatus> status;
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool timed_out = false;
  double duration_s = 0;
  std::string log_path;  ///< relative to the run's out_dir
  std::string started_at;
  std::string finished_at;
  std::string note;         ///< why, when the status needs explaining (launch error, limit hit)
  std::string parsed_from;  ///< "junit", "log", or empty when nothing could be parsed
  ReportedCounts reported;  ///< what the framework itself said it ran
};

/// A test case read back from the store, with the file it belongs to.
struct StoredCase {
  std::string file;  ///< FileRecord::path
  TestCase test;
  std::string signature;  ///< empty for cases that did not fail
};

/// A run's redirections of one kind (Store::redirections).
struct RunRedirection {
  Redirection first;  ///< shim, api, requested, used and the first call site
  long long count = 0;
  int files = 0;  ///< how many test files made it
  int sites = 0;  ///< from how many call sites
};

class Store {
 public:
  /// Opens or creates the database (WAL mode), migrates it to the current schema, and marks
  /// runs left "running" by a runner process of this host that no longer exists as
  /// "interrupted". Throws RuntimeError if the file cannot be opened or is newer than this build.
  explicit Store(const std::filesystem::path& path);

  static int schema_version();
  const std::filesystem::path& path() const { return db_.path(); }

  /// Inserts the run (status "running") and a row per planned file, in one transaction.
  std::int64_t begin_run(RunRecord run, const std::vector<std::string>& planned_files);
  /// Writes one finished file's result, its cases and its redirection record (replacing any
  /// recorded before) in one transaction; failing cases get a signature (parsers/signature.h);
  /// text is sanitised to valid UTF-8 on the way in.
  void record_file(std::int64_t run_id, const FileRecord& file,
                   const std::vector<TestCase>& cases = {},
                   const std::vector<Redirection>& redirections = {});
  void finish_run(std::int64_t run_id, const std::string& status, const std::string& finished_at);
  /// Stores the run's environment (a JSON object, RunRecord::environment).
  void set_environment(std::int64_t run_id, const std::string& environment_json);

  std::vector<RunRecord> runs(int limit = 50);
  std::optional<RunRecord> run(std::int64_t run_id);
  /// The run a user named: a number, or "latest" (or empty) for the newest. Throws UsageError
  /// when it is neither or no such run exists.
  RunRecord resolve_run(const std::string& spec);
  std::vector<FileRecord> files(std::int64_t run_id);
  /// Every case of a run, ordered by file path then as recorded.
  std::vector<StoredCase> cases(std::int64_t run_id);
  /// The run's redirections summed over its files and call sites, one per (shim, api, requested,
  /// used), most frequent first; the call site is the first one recorded.
  std::vector<RunRedirection> redirections(std::int64_t run_id);

 private:
  void insert_cases(std::int64_t run_id, std::int64_t file_id, const std::vector<TestCase>& cases);
  void insert_redirections(std::int64_t run_id, std::int64_t file_id,
                           const std::vector<Redirection>& redirections);
  void migrate();
  void mark_stale_runs_interrupted();

  sql::Database db_;
};

/// "2026-11-21T22:46:00Z" for now, or for a time point.
std::string iso8601_utc_now();
std::string iso8601_utc(std::chrono::system_clock::time_point t);

}  // namespace devshim
