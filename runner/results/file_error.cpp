#include "runner/results/file_error.h"

#include <fmt/format.h>

#include <algorithm>

#include "parsers/gap_attribution.h"
#include "runner/results/status.h"

namespace devshim {

std::optional<FileError> file_error(const FileRecord& file,
                                    const std::vector<const TestCase*>& cases) {
  if (!file.status || !is_failure(*file.status)) return std::nullopt;
  if (!std::all_of(cases.begin(), cases.end(),
                   [](const TestCase* c) { return is_import_error_case(*c); })) {
    return std::nullopt;
  }
  FileError e;
  if (!cases.empty()) {
    const TestCase& c = *cases.front();
    e.exception = c.exception;
    e.message = c.message;
    e.traceback = c.traceback;
    e.frames = innermost_frames(c.traceback, kFileErrorFrames);
  } else if (*file.status == FileStatus::kTimeout) {
    e.exception = "Timeout";
  } else if (*file.status == FileStatus::kCrashed) {
    e.exception = "Crashed";
  }
  if (e.message.empty()) {
    e.message = !file.note.empty() ? file.note
                : file.exit_code
                    ? fmt::format("exited with code {} before reporting a test", *file.exit_code)
                : file.signal
                    ? fmt::format("killed by signal {} before reporting a test", *file.signal)
                    : std::string("stopped before reporting a test");
  }
  return e;
}

std::string file_error_text(const FileError& error) {
  if (error.exception.empty()) return error.message;
  return error.message.empty() ? error.exception : error.exception + ": " + error.message;
}

std::string frame_text(const TracebackFrame& frame) {
  std::string path = frame.file;
  // A package's file from its package on: the prefix is the same machine's folders.
  for (const std::string_view root : {"/site-packages/", "/dist-packages/"}) {
    if (auto at = path.rfind(root); at != std::string::npos) {
      path = path.substr(at + root.size());
      break;
    }
  }
  if (auto at = path.find("/lib/python3"); at != std::string::npos) {
    if (auto slash = path.find('/', at + 5); slash != std::string::npos) {
      path = path.substr(slash + 1);
    }
  }
  std::string text = frame.line > 0 ? fmt::format("{}:{}", path, frame.line) : path;
  if (!frame.function.empty()) text += " in " + frame.function;
  return text;
}

bool stopped_early(const FileRecord& file) {
  if (!file.status) return true;
  switch (*file.status) {
    case FileStatus::kError:
    case FileStatus::kTimeout:
    case FileStatus::kCrashed:
    case FileStatus::kInterrupted:
      return true;
    default:
      return false;
  }
}

std::string missing_reason(const FileRecord* file, const std::optional<FileError>& error) {
  if (file == nullptr || !file->status) return "its file did not run";
  switch (*file->status) {
    case FileStatus::kTimeout:
      return "its file timed out before it";
    case FileStatus::kCrashed:
      return "its file crashed before it" + (error ? ": " + file_error_text(*error) : "");
    case FileStatus::kInterrupted:
      return "the run was interrupted before it";
    case FileStatus::kError:
      return error ? "its file failed: " + file_error_text(*error)
                   : "its file failed before reporting it";
    default:
      return "its file ran without reporting it";
  }
}

}  // namespace devshim
