// The vocabulary of outcomes (docs/database.md#status-values), used verbatim in the database, JSON
// and reports.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace devshim {

/// Outcome of one test file.
enum class FileStatus {
  kPassed,       ///< the process ran and no test failed
  kFailed,       ///< a test failed or errored
  kError,        ///< no test ran: import/collection error, or the process could not start
  kTimeout,      ///< killed by the runner past the timeout
  kCrashed,      ///< terminated by a signal the runner did not send
  kNoTests,      ///< ran, found nothing to run
  kInterrupted,  ///< killed because the run was interrupted
};

std::string_view to_string(FileStatus s);
std::optional<FileStatus> parse_file_status(std::string_view s);
/// True for statuses that make the run exit 1: failed, error, timeout, crashed.
bool is_failure(FileStatus s);

/// "3 failed, 1 passed": each status with a nonzero count, in the map's (alphabetical) order;
/// "" when there is none. Lists of runs, `runner show` and the reports count with it.
std::string counts_text(const std::map<std::string, int>& counts);

}  // namespace devshim
