// Text made safe for a terminal and for line-oriented logs (run.log, progress lines, `runner
// show`).
//
// File and test names come from the suite under test and may hold anything a file system allows:
// an escape sequence would drive the reader's terminal, a newline would break a one-line-per-entry
// format. printable() writes them as visible escapes instead.
#pragma once

#include <string>
#include <string_view>

namespace devshim {

/// s with each C0 control (newline and tab included), DEL and each C1 control (U+0080..U+009F,
/// UTF-8 C2 80..C2 9F) written as an escape: \n, \r, \t, \\xNN for the other C0 controls and DEL,
/// \\u00NN for C1. Every other byte, invalid UTF-8 included, is kept as it is; a backslash stays
/// a single backslash, so text without controls comes back unchanged.
inline std::string printable(std::string_view s) {
  auto is_control = [&](std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return 1;
    if (c == 0xc2 && i + 1 < s.size()) {
      const auto next = static_cast<unsigned char>(s[i + 1]);
      if (next >= 0x80 && next <= 0x9f) return 2;
    }
    return 0;
  };
  std::size_t i = 0;
  while (i < s.size() && is_control(i) == 0) ++i;
  if (i == s.size()) return std::string(s);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(s.substr(0, i));
  out.reserve(s.size() + 16);
  while (i < s.size()) {
    const int width = is_control(i);
    const auto c = static_cast<unsigned char>(s[i]);
    if (width == 0) {
      out += s[i++];
    } else if (width == 2) {
      const auto next = static_cast<unsigned char>(s[i + 1]);
      out += "\\u00";
      out += kHex[next >> 4U];
      out += kHex[next & 0xfU];
      i += 2;
    } else {
      switch (c) {
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          out += "\\x";
          out += kHex[c >> 4U];
          out += kHex[c & 0xfU];
      }
      ++i;
    }
  }
  return out;
}

}  // namespace devshim
