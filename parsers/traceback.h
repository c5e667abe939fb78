// Python tracebacks as printed by the interpreter and unittest: frames and the final exception.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/test_result.h"

namespace devshim {

struct TracebackFrame {
  std::string file;  ///< as printed: usually absolute
  int line = 0;
  std::string function;  ///< "<module>" for module level
  std::string code;      ///< the source line printed under the frame, trimmed; may be empty
};

struct ParsedTraceback {
  /// Frames of the last traceback in the text (the one that ended the test), outermost first.
  std::vector<TracebackFrame> frames;
  std::string exception;  ///< "AssertionError", "torch.OutOfMemoryError"; empty when none found
  std::string message;    ///< first line of the exception's message (may be empty)
};

/// One frame line of Python's traceback format, indented or not: `File "/x/y.py", line 12, in f`
/// (the interpreter's) or `File "/x/y.py", line 12 in f` (faulthandler's); code stays empty. A
/// negative line number reads as 0 (unknown). nullopt for any other line.
std::optional<TracebackFrame> parse_frame_line(std::string_view line);

/// A location line of pytest's traceback formats, at column 0: `path:LINE: rest`
/// ("tests/x.py:12: AssertionError", the crash line of --tb=long; "tests/x.py:19: ", an outer
/// frame; "/abs/y.py:5: in f", --tb=short) or `path:LINE` ending the line ("/abs/tests/x.py:37",
/// closing a fixture lookup error). The path is what comes before the first ":LINE:" (or the
/// ":LINE" that ends the line) and holds no space.
struct LocationLine {
  std::string_view path;
  int line = 0;           ///< 0 when the digits overflow an int
  std::string_view rest;  ///< after the second ':', trimmed; empty when none
  bool bare = false;      ///< `path:LINE` with no ':' after the number
};
std::optional<LocationLine> parse_location_line(std::string_view line);

/// Parses `Traceback (most recent call last):` blocks, following chained exceptions ("During
/// handling of the above exception…", "The above exception was the direct cause…") to the last
/// one. Tolerates text around the traceback and the caret lines of Python 3.11. Never throws.
ParsedTraceback parse_traceback(std::string_view text);

/// The frames of a failure's text, outermost first, from Python's own traceback format
/// (parse_traceback: unittest, pytest --tb=native, faulthandler) or else from pytest's long and
/// short formats (`path:line: in function`, `>` source lines, `path:line: Error` locations).
std::vector<TracebackFrame> failure_frames(std::string_view traceback);

/// The deepest frame whose file is test_file (a path relative to the project root such as
/// "tests/test_x.py", matched as a path suffix), made relative to the project root.
std::optional<SourceLocation> location_in_file(const ParsedTraceback& tb,
                                               std::string_view test_file);

/// 1-based line of `def <function>` (or `async def`) in the file at path, searching the class
/// `<klass>` first when given; nullopt when the file or the definition is not found.
std::optional<int> find_def_line(const std::string& path, std::string_view function,
                                 std::string_view klass = {});

}  // namespace devshim
