// What a pytest failure report says (summarize_pytest_failure: the exception, its message, the
// line in the test file), the traceback as stored (pytest_traceback_text), and the pieces of
// both that the log parser (parsers/pytest_text.cpp) reads the same way.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parsers/test_result.h"
#include "parsers/traceback.h"

namespace devshim {

/// What a pytest failure report (`--tb=long`, the default, or short/native/line) says.
struct PytestFailure {
  std::string exception;  ///< "AssertionError", "tests.test_x.MyError"; empty when none found
  std::string message;    ///< first line of the exception message ("assert 1 == 2" for a bare
                          ///< assert), else the first line of the text ("[XPASS(strict)] ...")
  std::optional<SourceLocation> location;  ///< deepest frame in test_file, path = test_file
};

/// Reads a pytest longrepr: the last block of `E   ` lines gives the exception and message (the
/// type is checked against the final `path:LINE: ExcType` line, which also names it when the E
/// line is a bare `assert ...`); `path:LINE:` and `File "path", line N` frames give the deepest
/// line in test_file (matched as a path suffix). Falls back to a native traceback. Never throws.
PytestFailure summarize_pytest_failure(std::string_view text, std::string_view test_file);

/// A traceback as stored: leading and trailing blank lines dropped, at most about 64 KiB (the
/// head and the tail are kept, the middle replaced by one "[... N lines cut ...]" line).
std::string pytest_traceback_text(std::string_view text);

namespace pytest_report {

/// The most bytes of a message kept (capped_message).
inline constexpr std::size_t kMaxMessageBytes = std::size_t{2} * 1024;

/// s trimmed and cut to kMaxMessageBytes (never inside a UTF-8 sequence).
std::string capped_message(std::string_view s);

/// Calls f(line) for each line of text ("\n" or "\r\n" endings).
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line);
    pos = end + 1;
  }
}

/// "pkg.mod.Error: message" / "Error" → name and the rest; false unless the text starts with a
/// dotted identifier followed by ":" or the end of the text.
bool split_exception(std::string_view text, std::string_view& name, std::string_view& rest);

/// An exception class name: its last component starts with a capital (ValueError, Failed,
/// tests.test_x.MyError), unlike "assert", "in" or "self".
bool plausible_exception(std::string_view name);

/// A printed path names test_file ("tests/test_x.py"): equal, or one is a suffix of the other
/// at a "/" boundary (absolute paths, paths relative to another directory).
bool path_matches(std::string_view printed, std::string_view test_file);

/// pytest's location line (parse_location_line) of a `.py` file.
std::optional<LocationLine> py_location_line(std::string_view line);

/// Reads a pytest failure report line by line (feed), keeping only what
/// summarize_pytest_failure needs: the last block of `E` lines, the exception the last location
/// line names, the last line of each file the frames name (at most 256 files).
class FailureScanner {
 public:
  void feed(std::string_view line);
  /// What the lines fed say; text: the report as stored, for the native-traceback fallback.
  PytestFailure finish(std::string_view text, std::string_view test_file) const;

 private:
  /// Frames in the order of their last appearance: the deepest of the last traceback is last.
  void add_frame(std::string_view path, int line);

  std::string first_line_;
  bool fixture_lookup_ = false;
  bool in_e_ = false;
  std::vector<std::string> e_block_;  // the last run of "E   " lines
  std::string loc_exception_;         // from the last "path:LINE: ExcType" line
  std::vector<std::pair<std::string, int>> frames_;
};

/// A traceback kept within 32 KiB of head and 32 KiB of tail, as lines arrive (leading blank
/// lines dropped): str() gives it with the cut middle as one "[... N lines cut ...]" line.
class CappedText {
 public:
  void add(std::string_view line);
  std::string str() const;

 private:
  bool started_ = false;
  std::string head_;
  std::deque<std::string> tail_;
  std::size_t tail_bytes_ = 0;
  std::size_t cut_lines_ = 0;
};

}  // namespace pytest_report

}  // namespace devshim
