// What a run tells while it works, as events. The engine never writes to the terminal: it reports
// each event to a RunSink, which the command line implements (runner/cli/terminal_sink.h: the
// lines docs/cli.md shows) and the tests implement by keeping the events
// (tests/support/recording_sink.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "runner/results/status.h"

namespace devshim {

/// What a batch of files knows of the work ahead, beyond the number of files.
struct ProgressPlan {
  /// Expected seconds of each file (recorded durations); empty: no estimate of the time left.
  std::map<std::string, double> expected_s;
  int jobs = 1;                       ///< files at once, to turn expected work into an estimate
  std::chrono::seconds heartbeat{0};  ///< "still running" notices off a terminal; 0: none
};

/// The progress of one batch of files (the run's, a rerun's, a continuation's), in the order the
/// pool reports it, all on the run's thread.
class FileProgress {
 public:
  virtual ~FileProgress() = default;
  /// What the runner does before the batch's first file starts (the warm start's imports); empty:
  /// nothing any more.
  virtual void preparing(const std::string& what) = 0;
  /// A line the batch says once (the warm start unavailable, a file started cold), whole.
  virtual void note(const std::string& line) = 0;
  virtual void started(const std::string& file) = 0;
  /// A file finished; log is its log's path, detail why it ended as it did (may be empty).
  virtual void finished(const std::string& file, FileStatus status, double duration_s,
                        const std::string& log, const std::string& detail) = 0;
  /// About once a second while files run.
  virtual void tick() = 0;
  /// The batch is over; nothing more is reported to this object.
  virtual void close() = 0;
};

/// A run (or a resumed run's session) starts its files.
struct RunStarted {
  std::int64_t run_id = 0;
  bool resumed = false;
  std::size_t files = 0;
  std::string suite;
  std::string shard;  ///< "2/4"; empty: not sharded
  int at_once = 1;
  bool shim = true;
  std::filesystem::path out_dir;
};

/// A pass after the main one starts: the reruns of failing files (--rerun-failures) or the
/// continuation of files cut short (--continue-after-crash).
struct PassStarted {
  enum class Kind { kRerun, kContinuation } kind = Kind::kRerun;
  int pass = 1;              ///< 1-based
  int passes = 1;            ///< at most
  std::size_t files = 0;     ///< files of this pass
  std::size_t narrowed = 0;  ///< reruns: files rerun by their failing tests alone
};

/// --try-settings: a documented setting of the shim is tried on the tests of the gap-log
/// entries that name it.
struct TrialStarted {
  std::string setting;
  std::size_t tests = 0;
  std::size_t entries = 0;
  std::size_t files = 0;
};
struct TrialEnded {
  std::string setting;
  std::size_t passed = 0;
  std::size_t tests = 0;
};
/// --try-settings found no gap-log entry of the run naming a setting.
struct NoSettingToTry {};

/// Something a person must know that does not stop the run. The text is one line, without the
/// "runner:" prefix.
struct Problem {
  enum class Severity {
    kNotice,   ///< a fact that changes the verdict ("no test matched ...")
    kWarning,  ///< the run goes on as it should, with a caveat
    kError,    ///< a part of the run's work failed (the gap log, the reports); results are kept
  } severity = Severity::kWarning;
  std::string text;
};

/// The run is recorded, with these counts of the whole run (a resumed run's earlier sessions and
/// the reruns' verdicts included); its reports come next.
struct RunRecorded {
  std::int64_t run_id = 0;
  std::string status;       ///< passed, failed, interrupted
  std::size_t files = 0;    ///< planned files
  std::string file_counts;  ///< "2 passed, 1 failed" (statuses in their order, then "not run")
  std::string test_counts;  ///< "5 tests, 4 passed, 1 failed"
};

/// The run is over: where its results are.
struct RunClosed {
  std::int64_t run_id = 0;
  /// The signal's name when one came while the gap log, the trials or the reports were written
  /// (the run is marked interrupted); empty otherwise.
  std::string interrupted_by;
  std::vector<std::filesystem::path> reports;
  std::filesystem::path out_dir;  ///< its logs/ and run.log are there
  std::filesystem::path database;
};

/// --list: the files a run would start, in path order.
struct FilesListed {
  std::vector<std::string> files;
};

using RunEvent = std::variant<RunStarted, PassStarted, TrialStarted, TrialEnded, NoSettingToTry,
                              Problem, RunRecorded, RunClosed, FilesListed>;

/// Where a run reports its events. Called on the run's thread only.
class RunSink {
 public:
  virtual ~RunSink() = default;
  virtual void report(const RunEvent& event) = 0;
  /// The progress display of a batch of `files` files.
  virtual std::unique_ptr<FileProgress> progress(std::size_t files, const ProgressPlan& plan) = 0;
};

}  // namespace devshim
