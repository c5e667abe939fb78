// The results store: one SQLite file that accumulates runs (schema: docs/database.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "parsers/test_result.h"
#include "runner/results/redirection_record.h"
#include "runner/results/sqlite.h"
#include "runner/results/status.h"

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
  std::int64_t previous_run = 0;  ///< the earlier run it is compared with (--previous); 0: none
  std::string shard;              ///< "2/4" for a run of --shard; empty otherwise
  std::string shard_plan;         ///< fingerprint of the shard assignment (schedule.h); or empty
  /// JSON object: the run's counts as its last report saw them (reports/report.h, run_summary);
  /// empty before a report was written.
  std::string summary;
  /// Shim runs: the redirection policy the test processes get (TORCHDEVICE_POLICY; "default"
  /// when unset). Empty for baseline runs, and for runs recorded before schema 11.
  std::string policy;
};

/// The policy that makes runs comparable (Store::comparable_run): run.policy, or for a shim run
/// that recorded none (before schema 11) "default"; empty for baseline runs.
std::string comparable_policy(const RunRecord& run);

/// Why a run's reports have no upstream links although its suite names a source_url template:
/// its project is not a git checkout, so there is no commit to link at (a dirty or detached
/// checkout has one). Empty when the run has no source_url or has a commit.
std::string missing_links_note(const RunRecord& run);

/// A run's environment (RunRecord::environment) parsed: a JSON object, empty when the run has
/// none or it cannot be read.
nlohmann::json environment_json(const RunRecord& run);

/// The versions that make runs comparable (Store::comparable_run), from a run's environment
/// (the probe of its interpreter): torch's ("torch"), and the shim's ("shim"."version") for a shim
/// run. Each is empty when the environment does not say (a run still going, an imported run, a
/// run whose interpreter has no torch); a baseline run's shim is always empty.
struct RunVersions {
  std::string torch, shim;
  bool operator==(const RunVersions&) const = default;
};
RunVersions run_versions(const RunRecord& run);
/// The same from the run's environment already parsed (an object, else nothing is found).
RunVersions run_versions(const RunRecord& run, const nlohmann::json& environment);

/// How the run's test files started, from its environment's "start"."mode": "warm", "cold", or
/// empty when it recorded none (runs before the warm start, imported runs).
std::string start_mode(const RunRecord& run);
/// The same from the run's environment already parsed.
std::string start_mode(const nlohmann::json& environment);

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
  std::string signature;       ///< empty for cases that did not fail
  bool flaky = false;          ///< failed, then passed on a rerun (status: the passing outcome)
  std::int64_t result_id = 0;  ///< results.id
  /// tests.id: the same class name and test name have the same id in every run of the store.
  std::int64_t test_id = 0;
};

/// A run's results without their texts (Store::result_statuses): what counting and comparing
/// runs test by test needs, a few bytes a result.
struct RunResultStatuses {
  struct Row {
    std::int64_t result_id = 0;
    std::int64_t test_id = 0;  ///< as StoredCase::test_id
    std::uint32_t file = 0;    ///< index into files
    CaseStatus status = CaseStatus::kPassed;
    bool flaky = false;
    bool culprit = false;                           ///< TestCase::culprit is set
    bool signature = false;                         ///< StoredCase::signature is set
    CudaContact cuda_contact = CudaContact::kNone;  ///< TestCase::cuda_contact
    bool fails_in_cuda_branch = false;              ///< TestCase::fails_in_cuda_branch
  };
  std::vector<std::string> files;  ///< the paths of the run's files that have results, sorted
  std::vector<Row> rows;           ///< in Store::cases' order: by file path, then as recorded
  /// Set on another run aligned to a run (renumbering_aligned): that run's tests, by file path
  /// and test id, whose cases were renumbered with no one counterpart in this one.
  std::set<std::pair<std::string, std::int64_t>> renumbered;
  /// Set with renumbered: how many of the other run's passing cases must fail in this one or be
  /// gone from it (regressions or lost tests): in each group, at least (the other run's passing
  /// cases) - (this run's cases that do not fail); the sum over the groups, each at least 0.
  std::size_t renumbered_regressions = 0;
};

/// A run's redirections of one kind (Store::redirections).
struct RunRedirection {
  Redirection first;  ///< shim, api, requested, used and the first call site
  long long count = 0;
  int files = 0;  ///< how many test files made it
  int sites = 0;  ///< from how many call sites
};

/// One outcome of one test in a run with --rerun-failures: attempt 1 is the first run, 2… the
/// reruns. A file that failed without any test result has attempts named "(file)" (classname
/// empty).
struct CaseAttempt {
  std::string file;  ///< FileRecord::path
  std::string classname;
  std::string name;
  int attempt = 1;
  CaseStatus status = CaseStatus::kPassed;
  std::string message;  ///< "Exception: message" of a failing attempt; may be empty
};

/// What the reruns of one file found (Store::record_reruns).
struct RerunResult {
  std::string path;                   ///< the file
  std::vector<CaseAttempt> attempts;  ///< every attempt of each rerun test, the first included
  /// Tests that passed on a rerun: their outcome there (status, duration). The stored case keeps
  /// the first attempt's failure (exception, message, traceback, signature) and gets flaky = 1.
  std::vector<TestCase> flaky;
  std::optional<FileStatus> status;  ///< the file's status after the reruns, when it changed
  std::string note;                  ///< appended to the file's note; empty: none
};

/// One run's outcome of a test (Store::test_history), newest run first.
struct TestHistoryEntry {
  RunRecord run;
  std::string file;
  TestCase test;
  bool flaky = false;
  int attempts = 0;  ///< rows in attempts (0: not rerun)
};

/// A Store, like its connection (sql::Database), is used by one thread at a time. One class, its
/// member functions defined by concern: runner/results/store.cpp (opening, stale runs),
/// runner/results/store_schema.cpp (migrations), runner/results/store_write.cpp (run records,
/// record_file, FileWriter), runner/results/store_read.cpp (runs, files, cases, redirections),
/// runner/results/store_nightly.cpp (nightly operations).
class Store {
 public:
  /// Opens or creates the database (WAL mode), migrates it to the current schema, and marks
  /// runs left "running" by a runner process of this host that no longer exists as
  /// "interrupted". Throws RuntimeError if the file cannot be opened or is newer than this build.
  /// For Purpose::kRead (commands that only read) on a file or folder it cannot write: opens the
  /// existing file read-only and changes nothing (no migration, no stale-run marking); a schema
  /// older than this build's is then an error saying to open it once with write access.
  enum class Purpose { kWrite, kRead };
  explicit Store(const std::filesystem::path& path, Purpose purpose = Purpose::kWrite);

  static int schema_version();
  const std::filesystem::path& path() const { return db_.path(); }
  /// The connection, for modules that keep their own tables in the same file
  /// (runner/results/gap_log.h).
  sql::Database& database() { return db_; }

  /// Inserts the run (status "running") and a row per planned file, in one transaction.
  std::int64_t begin_run(RunRecord run, const std::vector<std::string>& planned_files);
  /// Writes one finished file's result, its cases and its redirection record (replacing any
  /// recorded before) in one transaction; failing cases get a signature (parsers/signature.h);
  /// text is sanitised to valid UTF-8 on the way in.
  void record_file(std::int64_t run_id, const FileRecord& file,
                   const std::vector<TestCase>& cases = {},
                   const std::vector<Redirection>& redirections = {});
  /// Adds cases to a file of the run already recorded, in one transaction: its cases and its
  /// redirection record stay, its note becomes `note`. For the tests that a continuation after a
  /// crash ran (runner/engine/continuation.h). Throws RuntimeError when the file has no row.
  void add_cases(std::int64_t run_id, const std::string& path, const std::vector<TestCase>& cases,
                 const std::string& note);
  /// Writes finished files of one run in a single transaction with its statements prepared once:
  /// what record_file does for one file, for each of many (runner import writes a whole run with
  /// one). Other connections see nothing before commit(); destroyed without it, it rolls back.
  /// Other writes through the Store while it lives join its transaction. It writes with SQLite's
  /// foreign key checks off (on again when it is destroyed): every id it writes it has just read
  /// or inserted in its own transaction, and it deletes only rows nothing references, so no check
  /// or cascade is due; the checks were a quarter of an import's time.
  class FileWriter {
   public:
    static constexpr int kResultColumns = 15;        // of an INSERT INTO results
    static constexpr std::size_t kResultBatch = 32;  // rows an INSERT writes at once
    FileWriter(Store& store, std::int64_t run_id);
    ~FileWriter();
    FileWriter(const FileWriter&) = delete;
    FileWriter& operator=(const FileWriter&) = delete;
    /// As record_file.
    void add(const FileRecord& file, const std::vector<TestCase>& cases = {},
             const std::vector<Redirection>& redirections = {});
    /// As add_cases.
    void append(const std::string& path, const std::vector<TestCase>& cases,
                const std::string& note);
    void commit();

   private:
    void insert_cases(std::int64_t file_id, const std::vector<TestCase>& cases);
    /// The id of the test in table tests (and of its class and name in classes and names),
    /// inserted when new.
    std::int64_t test_id(const std::string& classname, const std::string& name);
    std::int64_t interned(std::unordered_map<std::string, std::int64_t>& cache,
                          sql::Statement& find, sql::Statement& insert, const std::string& text,
                          bool* inserted);
    /// The id of text in table texts, inserted when new; nullopt when another text has its hash.
    std::optional<std::int64_t> text_id(const std::string& text);
    /// How a message or traceback (already sanitised) is stored: nothing for none; else the id of
    /// its row in texts, or, when another text has its hash, the text itself.
    std::pair<std::optional<std::string>, std::optional<std::int64_t>> stored_text(
        std::string clean);
    /// A results row waiting to be written with others in one statement.
    struct PendingResult {
      std::int64_t file_id = 0;
      std::int64_t test_id = 0;
      int status = 0;
      double duration_s = 0;
      std::optional<std::string> exception, message, traceback, signature, source_path, culprit;
      std::optional<std::int64_t> source_line, traceback_id, message_id;
      int cuda_path = 0;
      int cuda_branch = 0;
    };
    static void bind_result(sql::Statement& ins, int first, const PendingResult& r);
    /// Writes the pending rows: kResultBatch of them in one statement, fewer one by one.
    void write_pending();
    void insert_redirections(std::int64_t file_id, const std::vector<Redirection>& redirections);

    struct Statements;
    /// PRAGMA foreign_keys off for its life (before the transaction begins: inside one it is a
    /// no-op), on again after.
    class ForeignKeysOff {
     public:
      explicit ForeignKeysOff(sql::Database& db);
      ~ForeignKeysOff();
      ForeignKeysOff(const ForeignKeysOff&) = delete;
      ForeignKeysOff& operator=(const ForeignKeysOff&) = delete;

     private:
      sql::Database& db_;
    };
    sql::Database& db_;
    std::int64_t run_id_;
    ForeignKeysOff foreign_keys_off_;
    sql::Transaction tx_;
    std::unique_ptr<Statements> s_;
    static constexpr std::size_t kInternCacheSize = 100000;
    std::unordered_map<std::string, std::int64_t> class_ids_;  // classes.id by name
    std::unordered_map<std::string, std::int64_t> name_ids_;   // names.id by name
    // Classes this writer inserted: their tests can only be ones it inserted, so a test of one
    // is inserted without looking for it first.
    std::unordered_set<std::int64_t> new_classes_;
    std::vector<PendingResult> pending_;  // fewer than kResultBatch: written by commit() at last
  };

  void finish_run(std::int64_t run_id, const std::string& status, const std::string& finished_at);
  /// Makes an interrupted run "running" again under this process (runner --resume). Returns false
  /// when it is not interrupted any more (another runner claimed it first).
  bool claim_run(std::int64_t run_id);
  /// Stores the run's environment (a JSON object, RunRecord::environment).
  void set_environment(std::int64_t run_id, const std::string& environment_json);
  /// Stores the run's summary (a JSON object, RunRecord::summary).
  void set_summary(std::int64_t run_id, const std::string& summary_json);

  std::vector<RunRecord> runs(int limit = 50);
  std::optional<RunRecord> run(std::int64_t run_id);
  /// The runs that name run_id as their previous run or their baseline run, oldest first: the
  /// runs a report links forward to.
  std::vector<RunRecord> runs_naming(std::int64_t run_id);
  /// The run a user named: a number, "latest" (or empty) for the newest, or "latest~N" for the
  /// Nth before it (by id). Throws UsageError when it is none of these or no such run exists.
  RunRecord resolve_run(const std::string& spec);
  std::vector<FileRecord> files(std::int64_t run_id);
  /// How many of the run's files ended with each status ("not_run": planned, never finished).
  std::map<std::string, int> file_status_counts(std::int64_t run_id);
  /// Every case of a run, ordered by file path then as recorded.
  std::vector<StoredCase> cases(std::int64_t run_id);
  /// Every result of a run without its texts, in the order of cases(run_id).
  RunResultStatuses result_statuses(std::int64_t run_id);
  /// The cases of the given results (RunResultStatuses::Row::result_id), in the order given;
  /// an id that names no result is left out.
  std::vector<StoredCase> cases_by_id(const std::vector<std::int64_t>& result_ids);
  /// The class name and test name of each test id (StoredCase::test_id) given; unknown ids are
  /// left out.
  std::map<std::int64_t, std::pair<std::string, std::string>> test_names(
      const std::vector<std::int64_t>& test_ids);
  /// The run's redirections summed over its files and call sites, one per (shim, api, requested,
  /// used), most frequent first; the call site is the first one recorded.
  std::vector<RunRedirection> redirections(std::int64_t run_id);

  // Nightly operations (store_nightly.cpp).

  /// The newest finished (passed or failed) run older than before_id (0: any) with the same suite,
  /// targets, mode, shard and shim policy (comparable_policy) as run, and the same torch and shim
  /// versions (run_versions) where run's environment names them (each one it names; a run still
  /// going names none): the run a nightly run is compared with.
  std::optional<RunRecord> comparable_run(const RunRecord& run, std::int64_t before_id = 0);
  /// Sets the run it is compared with (runs.previous_run; 0: none).
  void set_previous_run(std::int64_t run_id, std::int64_t previous_run);
  /// Running average duration of each file of a suite (table durations), by files.path.
  std::map<std::string, double> durations(const std::string& suite);
  /// Stores what --rerun-failures found for one file, in one transaction: its attempts, flaky = 1
  /// and the passing outcome on the flaky tests, the file's new status and note.
  void record_reruns(std::int64_t run_id, const RerunResult& rerun);
  /// Every attempt recorded for a run, by file path, test and attempt.
  std::vector<CaseAttempt> attempts(std::int64_t run_id);
  /// Each file's redirection record as stored (for runner merge), by file path.
  std::map<std::string, std::vector<Redirection>> file_redirections(std::int64_t run_id);
  /// Counts of the run's test results by status.
  std::map<CaseStatus, std::size_t> case_counts(std::int64_t run_id);
  /// The outcomes of one test across runs, newest first. test is a pytest node id
  /// ("tests/test_x.py::C::test_y"), "file::classname::name", "classname::name",
  /// "classname.name" (a unittest id) or a bare name; suite and mode ("shim", "baseline"),
  /// when not empty, narrow the runs.
  std::vector<TestHistoryEntry> test_history(const std::string& test, const std::string& suite,
                                             int limit, const std::string& mode = "");
  /// Runs to delete: beyond the newest keep runs of each suite (keep > 0), or started before
  /// older_than (ISO 8601; when not empty); only of suite when not empty. Running runs are
  /// never chosen. Newest first.
  std::vector<RunRecord> prunable_runs(int keep, const std::string& older_than,
                                       const std::string& suite);
  /// Deletes runs with their files, cases, attempts and redirections in one transaction; other
  /// runs' baseline_run / previous_run naming them become NULL; signatures no case uses any more
  /// are deleted.
  void delete_runs(const std::vector<std::int64_t>& run_ids);

 private:
  /// The statement that folds a file's duration into table durations (store_nightly.cpp), and
  /// running it for one file.
  static const char* update_duration_sql();
  static void update_duration(sql::Statement& s, std::int64_t run_id, const FileRecord& file);
  /// PRAGMA user_version; throws RuntimeError when it is newer than this build's schema.
  int stored_schema_version();
  void migrate();
  void mark_stale_runs_interrupted();

  sql::Database db_;
};

/// "2026-11-21T22:46:00Z" for now, or for a time point.
std::string iso8601_utc_now();

/// results.status, the code stored for a test's status: passed 0, failed 1, error 2, skipped 3,
/// xfailed 4, xpassed 5 (docs/database.md). result_status reads an unknown code as error.
int result_status_code(CaseStatus status);
CaseStatus result_status(std::int64_t code);
/// results.cuda_path read back (TestCase::cuda_contact's codes); an unknown code is none.
CudaContact cuda_contact_of(std::int64_t code);
std::string iso8601_utc(std::chrono::system_clock::time_point t);
/// Seconds between two ISO 8601 UTC stamps ("2026-11-21T22:46:00Z"); 0 when either is empty or
/// unreadable, or `to` is before `from`.
double seconds_between(const std::string& from, const std::string& to);
/// "20261121-234600": local time now, for the names of run folders.
std::string local_stamp();

/// This machine's host name as runs record it (RunRecord::host); "unknown" when it cannot be
/// read.
std::string host_name();

}  // namespace devshim
