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

/// Parses `Traceback (most recent call last):` blocks, following chained exceptions ("During
/// handling of the above exception…", "The above exception was the direct cause…") to the last
/// one. Tolerates text around the traceback and the caret lines of Python 3.11. Never throws.
ParsedTraceback parse_traceback(std::string_view text);

/// The deepest frame whose file is test_file (a path relative to the project root such as
/// "tests/test_x.py", matched as a path suffix), made relative to the project root.
std::optional<SourceLocation> location_in_file(const ParsedTraceback& tb,
                                               std::string_view test_file);

/// 1-based line of `def <function>` (or `async def`) in the file at path, searching the class
/// `<klass>` first when given; nullopt when the file or the definition is not found.
std::optional<int> find_def_line(const std::string& path, std::string_view function,
                                 std::string_view klass = {});

}  // namespace devshim
