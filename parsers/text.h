// Text helpers shared by the parsers, the log importer, the gap log and the reports.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace devshim {

/// Whitespace as the parsers read it: space, tab, CR, LF, vertical tab, form feed.
constexpr bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/// A character of a Python identifier as the parsers read one: an ASCII letter, digit or '_'
/// (whatever the C locale says).
constexpr bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// s without its leading whitespace.
constexpr std::string_view ltrim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  return s;
}

/// s without its trailing whitespace.
constexpr std::string_view rtrim(std::string_view s) {
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

/// s without leading and trailing whitespace.
constexpr std::string_view trim(std::string_view s) { return ltrim(rtrim(s)); }

/// s with its ASCII letters in lower case, for matching phrases whatever their case.
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// s cut to at most n bytes, never inside a UTF-8 sequence.
constexpr std::string_view cut_utf8(std::string_view s, std::size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0U) == 0x80U) --n;
  return s.substr(0, n);
}

/// The length of the hex number at s[i], "0x" or "0X" and its hex digits (the address in a
/// repr: `<function f at 0x7ff3c65e42c0>`); 0 when there is none (no digit after the "0x").
constexpr std::size_t hex_number_length(std::string_view s, std::size_t i) {
  auto hex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  if (s.substr(i, 2) != "0x" && s.substr(i, 2) != "0X") return 0;
  std::size_t end = i + 2;
  while (end < s.size() && hex(s[end])) ++end;
  return end == i + 2 ? 0 : end - i;
}

/// Whether s starts with "http://" or "https://" (the scheme in any case) and has more after it.
constexpr bool is_web_url(std::string_view s) {
  auto starts = [s](std::string_view scheme) {
    if (s.size() <= scheme.size()) return false;
    for (std::size_t i = 0; i < scheme.size(); ++i) {
      const char c = s[i] >= 'A' && s[i] <= 'Z' ? static_cast<char>(s[i] - 'A' + 'a') : s[i];
      if (c != scheme[i]) return false;
    }
    return true;
  };
  return starts("https://") || starts("http://");
}

/// Whether needle occurs in text.
inline bool has(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

/// Whether word occurs in text as a whole identifier (is_identifier_char on neither side).
inline bool has_word(std::string_view text, std::string_view word) {
  for (std::size_t p = text.find(word); p != std::string_view::npos; p = text.find(word, p + 1)) {
    const std::size_t end = p + word.size();
    if ((p == 0 || !is_identifier_char(text[p - 1])) &&
        (end == text.size() || !is_identifier_char(text[end]))) {
      return true;
    }
  }
  return false;
}

/// The lines of text ("\n" or "\r\n" endings), without their line ends; a text that ends with
/// "\n" gives an empty last line.
inline std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

}  // namespace devshim
