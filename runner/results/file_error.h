// What stopped a test file that reported no test (docs/report-format.md, "File errors"): its
// import or collection failed, or its process died or was stopped before its first test. Read
// from what the store holds (the file's row and its results), so that every reader (reports,
// `runner show`, the gap log, run.log) tells the same story.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "parsers/test_result.h"
#include "parsers/traceback.h"
#include "runner/results/store.h"

namespace devshim {

struct FileError {
  /// "TypeError", "ImportError"; "Timeout" or "Crashed" when the process was stopped before a
  /// test; empty when nothing names it (the message says how the process ended).
  std::string exception;
  std::string message;    ///< the exception's first line, or why the process stopped
  std::string traceback;  ///< as recorded; may be empty
  /// The innermost frames outside the test framework, innermost first (innermost_frames): where
  /// it happened.
  std::vector<TracebackFrame> frames;
};

/// How many frames FileError::frames holds at most.
inline constexpr std::size_t kFileErrorFrames = 3;

/// The error of a file that ended failing (error, timeout, crashed) without reporting a test, but
/// for its import or collection error (is_import_error_case): from that error's result when it
/// has one, else from how the process ended (the file's note). nullopt for a file that reported
/// a test, passed, found no test, was interrupted or did not run. cases: the file's results.
std::optional<FileError> file_error(const FileRecord& file,
                                    const std::vector<const TestCase*>& cases);

/// "TypeError: message", or whichever of the two is not empty.
std::string file_error_text(const FileError& error);

/// One frame as the reports show it: "torch/package/package_importer.py:742 in
/// _patched_getfile" (a site-packages or standard-library path from its package on).
std::string frame_text(const TracebackFrame& frame);

/// Whether a file stopped before its end: status error, timeout, crashed or interrupted, or none
/// (it did not run). The tests of another run missing from such a file are lost, not removed.
bool stopped_early(const FileRecord& file);

/// Why a test another run reported is missing from file (this run's record of its file; null when
/// the run has none): "its file failed: TypeError: ...", "its file timed out", "its file
/// crashed", "the run was interrupted", "its file did not run", or, for a file that ran to its
/// end, "its file ran without reporting it".
std::string missing_reason(const FileRecord* file, const std::optional<FileError>& error);

}  // namespace devshim
