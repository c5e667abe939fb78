// Line numbers for the members of a JSON document, for error messages that name file, line and key.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace devshim {

/// Where the members of a JSON text are.
struct JsonMembers {
  /// JSON pointer ("/env/HF_HUB_OFFLINE", "/pythonpath/1") -> 1-based line where that member's
  /// key (or array element) starts; for a key given twice, its first line.
  std::map<std::string, int> lines;
  /// Keys given again in the same object (JSON parsers keep one value silently): pointer and
  /// line of each repetition, in text order.
  std::vector<std::pair<std::string, int>> duplicates;
};

/// Scans text for its members. The text must already be valid JSON (parse it with nlohmann
/// first); on invalid text the result is partial but the function never throws.
JsonMembers json_members(std::string_view text);

/// A JSON pointer reference token: '~' → "~0", '/' → "~1" (RFC 6901).
std::string json_pointer_token(const std::string& token);

/// 1-based line and column of a byte offset in text.
struct TextPosition {
  int line = 1;
  int column = 1;
};
TextPosition position_of_offset(std::string_view text, std::size_t offset);

}  // namespace devshim
