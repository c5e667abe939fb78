// `runner import LOGDIR`: logs written by TorchDevice's run_transformer_tests.py → one run.
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

#include "runner/results/status.h"

namespace devshim {

/// One "Finished test:" line of the overall log.
struct FinishedLine {
  std::string module;  ///< as written: "tests/utils/test_x.py" or "tests.utils.test_x"
  FileStatus status = FileStatus::kError;
  std::optional<int> return_code;
  double duration_s = 0;
  std::string log_file;  ///< the "  Log file: PATH" line that follows it, when there is one
};

/// Parses a line containing "Finished test: "; nullopt for any other line. Status words are
/// matched case-insensitively: PASSED/PASS/SUCCESS/OK, FAILED/FAIL/FAILURE, ERROR, TIMEOUT/TIMED
/// OUT, CRASHED/SEGFAULT, SKIPPED/NO TESTS/NO_TESTS, INTERRUPTED; CRITICAL_FAILURE is crashed
/// when the return code is negative (a signal), else error; an unknown word is error.
std::optional<FinishedLine> parse_finished_line(std::string_view line);

/// A duration as TorchDevice's runner writes it (Python's str(timedelta): "0:00:00.080340",
/// "1:02:03", "2 days, 0:00:01.5") or in seconds ("12.50s", "12.5"). nullopt when it is neither.
std::optional<double> parse_duration(std::string_view text);

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

/// Imports LOGDIR into the database as one run (mode "shim", suite = suite_name, else the
/// project's folder name, else the series name) and prints its id. Throws UsageError when LOGDIR
/// has no overall log or it has no finished files.
int import_logs(const std::filesystem::path& log_dir, const std::filesystem::path& db_path,
                const std::string& suite_name);

}  // namespace devshim
