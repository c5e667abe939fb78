// `runner import LOGDIR`: logs written by TorchDevice's run_transformer_tests.py → one run.
//
// LOGDIR holds an overall log `<series>_<timestamp>.log` with one line per finished file,
//   ... Finished test: <module or path> - Status: <STATUS> (RC: <n>) Duration: <seconds>s
// and per-file logs `<project>/<path>.py.log` anywhere below it (unittest -v or pytest -v text).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "runner/status.h"

namespace devshim {

/// One "Finished test:" line of the overall log.
struct FinishedLine {
  std::string module;  ///< as written: "tests/utils/test_x.py" or "tests.utils.test_x"
  FileStatus status = FileStatus::kError;
  std::optional<int> return_code;
  double duration_s = 0;
};

/// Parses a line containing "Finished test: "; nullopt for any other line. Status words are
/// matched case-insensitively: PASSED/PASS/SUCCESS/OK, FAILED/FAIL, ERROR, TIMEOUT/TIMED OUT,
/// CRASHED/SEGFAULT, SKIPPED/NO TESTS/NO_TESTS, INTERRUPTED; an unknown word is error.
std::optional<FinishedLine> parse_finished_line(std::string_view line);

/// Imports LOGDIR into the database as one run (mode "shim", suite = the series name) and
/// prints its id. Throws UsageError when LOGDIR has no overall log or it has no finished files.
int import_logs(const std::filesystem::path& log_dir, const std::filesystem::path& db_path,
                const std::string& suite_name);

}  // namespace devshim
