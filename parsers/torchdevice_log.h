// The logs TorchDevice's run_transformer_tests.py writes, read as they are (`runner import` turns
// them into a run).
//
// What that runner really writes (tests/runner/fixtures/torchdevice/README.md):
// - LOGDIR/<series>_<timestamp>.log, the overall log, one entry per finished file:
//     Finished test: tests.utils.test_x - Status: FAILURE (RC: 1) Duration: 0:00:12.500000
//       Log file: test_automation/logs/<project>/utils/test_x.py.log
// - LOGDIR/<project>/<path relative to the project's tests/ folder>.log per file (unittest -v
//   output between a header and a "Duration:"/"Return code:" trailer).
// Also read: per-file logs named by the file's full path anywhere below LOGDIR
// (<project>/tests/utils/test_x.py.log), durations in seconds ("12.50s"), other status words.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parsers/line_reader.h"

namespace devshim {

/// What the status word of a "Finished test:" line says of the file.
enum class TorchDeviceStatus {
  kPassed,
  kFailed,
  kError,
  kTimeout,
  kCrashed,
  kNoTests,
  kInterrupted,
};

/// One "Finished test:" line of the overall log.
struct FinishedLine {
  std::string module;  ///< as written: "tests/utils/test_x.py" or "tests.utils.test_x"
  TorchDeviceStatus status = TorchDeviceStatus::kError;
  std::optional<int> return_code;
  double duration_s = 0;
  std::string log_file;  ///< the "  Log file: PATH" line that follows it, when there is one
};

/// Parses a line containing "Finished test: "; nullopt for any other line. Status words are
/// matched case-insensitively: PASSED/PASS/SUCCESS/OK, FAILED/FAIL/FAILURE, ERROR, TIMEOUT/TIMED
/// OUT, CRASHED/SEGFAULT, SKIPPED/NO TESTS/NO_TESTS (no tests), INTERRUPTED; CRITICAL_FAILURE is
/// crashed when the return code is negative (a signal), else error; an unknown word is error.
std::optional<FinishedLine> parse_finished_line(std::string_view line);

/// A duration as TorchDevice's runner writes it (Python's str(timedelta): "0:00:00.080340",
/// "1:02:03", "2 days, 0:00:01.5") or in seconds ("12.50s", "12.5"). nullopt when it is neither,
/// and for a negative or non-finite number ("nan", "inf").
std::optional<double> parse_duration(std::string_view text);

/// A module as the overall log names it, as a path: "tests.utils.test_x" →
/// "tests/utils/test_x.py"; a path ("….py") stays as it is.
std::string module_path(const std::string& module);

/// What the overall log says about the whole run.
struct OverallLog {
  std::filesystem::path path;  ///< empty when read from a LineReader
  std::vector<FinishedLine> finished;
  std::vector<std::string> found;  ///< "Found N test files to run:" then "  - tests/x.py" each
  std::string project_root;        ///< "Target project repo: PATH"
  /// Its folder name, else that of "Log directory for individual tests:".
  std::string project;
};

/// Reads an overall log: every "Finished test:" line with the "Log file:" line after it, the
/// files it found, the project. Throws RuntimeError when path cannot be read.
OverallLog read_overall_log(const std::filesystem::path& path);
OverallLog read_overall_log(LineReader& lines);

/// The series name of an overall log: its name up to the first '_'
/// ("transformers_20250501_100000.log" → "transformers").
std::string series_of(const std::filesystem::path& overall);

/// Whether a per-file log is pytest's output rather than unittest's ("test session starts" in its
/// first 20 lines).
bool looks_like_pytest(const std::filesystem::path& log);

/// The per-file logs below LOGDIR, indexed once by every path suffix that starts at a folder
/// boundary, so that finding a file's log costs a few hash look-ups whatever the number of logs.
class PerFileLogIndex {
 public:
  /// paths: relative to LOGDIR, '/'-separated, each ending in ".log".
  explicit PerFileLogIndex(std::vector<std::string> paths);

  /// The log of a test file, or nullptr. module_path: "tests/utils/test_x.py" (relative to the
  /// project root); project: the project folder's name when known (may be empty); log_file: the
  /// path the overall log gives (may be empty, absolute, or relative to another folder). Tried
  /// in order: the longest suffix of log_file that names one log; "<project>/<path below
  /// tests/>.log" (TorchDevice's layout); any log ending in "/<path below tests/>.log" one folder
  /// below LOGDIR; any log ending in "<module_path>.log" at a folder boundary. Among several
  /// matches, the first in path order.
  const std::string* find(const std::string& module_path, const std::string& project,
                          const std::string& log_file) const;

  std::size_t size() const { return paths_.size(); }
  /// Hash look-ups made by find() so far: a handful per call (tests check it stays linear).
  std::size_t lookups() const { return lookups_; }

 private:
  const std::string* lookup(const std::string& key) const;

  std::vector<std::string> paths_;                          // sorted
  std::unordered_map<std::string, std::size_t> by_suffix_;  // suffix → first path with it
  std::unordered_map<std::string, std::size_t> below_top_;  // path minus its first folder
  mutable std::atomic<std::size_t> lookups_ = 0;            // parsing threads look up at once
};

}  // namespace devshim
