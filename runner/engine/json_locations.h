// Line numbers for the members of a JSON document, for error messages that name file, line and key.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace devshim {

/// Maps JSON pointers ("/env/HF_HUB_OFFLINE", "/pythonpath/1") to the 1-based line where that
/// member's key (or array element) starts. The text must already be valid JSON (parse it with
/// nlohmann first); on invalid text the map is partial but the function never throws.
std::map<std::string, int> json_member_lines(std::string_view text);

/// A JSON pointer reference token: '~' → "~0", '/' → "~1" (RFC 6901).
std::string json_pointer_token(const std::string& token);

/// 1-based line and column of a byte offset in text.
struct TextPosition {
  int line = 1;
  int column = 1;
};
TextPosition position_of_offset(std::string_view text, std::size_t offset);

}  // namespace devshim
