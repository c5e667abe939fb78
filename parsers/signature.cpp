#include "parsers/signature.h"

#include <cstdint>
#include <cstdio>

#include "parsers/text.h"

namespace devshim {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool starts_with_at(std::string_view s, std::size_t i, std::string_view p) {
  return s.substr(i, p.size()) == p;
}

// Length of a number starting at s[i] (digits, optional fraction and exponent), 0 if none.
std::size_t number_length(std::string_view s, std::size_t i) {
  std::size_t j = i;
  while (j < s.size() && is_digit(s[j])) ++j;
  if (j == i) return 0;
  if (j + 1 < s.size() && s[j] == '.' && is_digit(s[j + 1])) {
    ++j;
    while (j < s.size() && is_digit(s[j])) ++j;
  }
  if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    std::size_t k = j + 1;
    if (k < s.size() && (s[k] == '-' || s[k] == '+')) ++k;
    if (k < s.size() && is_digit(s[k])) {
      while (k < s.size() && is_digit(s[k])) ++k;
      j = k;
    }
  }
  return j - i;
}

// "[2, 3, 4]" or "[]" at s[i] == '[': length of an integer list, 0 if it is not one.
std::size_t int_list_length(std::string_view s, std::size_t i) {
  std::size_t j = i + 1;
  bool any = false;
  while (j < s.size()) {
    while (j < s.size() && s[j] == ' ') ++j;
    if (j < s.size() && s[j] == ']') return any || j == i + 1 ? j + 1 - i : 0;
    if (j < s.size() && s[j] == '-') ++j;
    std::size_t k = j;
    while (k < s.size() && is_digit(s[k])) ++k;
    if (k == j) return 0;
    any = true;
    j = k;
    while (j < s.size() && s[j] == ' ') ++j;
    if (j < s.size() && s[j] == ',') {
      ++j;
    } else if (j < s.size() && s[j] == ']') {
      return j + 1 - i;
    } else {
      return 0;
    }
  }
  return 0;
}

// A path token at s[i]: "/a/b", "./a/b", "~/a", "C:\..." not handled; needs two segments.
std::size_t path_length(std::string_view s, std::size_t i) {
  if (!(s[i] == '/' || starts_with_at(s, i, "./") || starts_with_at(s, i, "../") ||
        starts_with_at(s, i, "~/"))) {
    return 0;
  }
  std::size_t j = i;
  int slashes = 0;
  while (j < s.size() && !is_space(s[j]) && s[j] != '\'' && s[j] != '"' && s[j] != ',' &&
         s[j] != ')' && s[j] != ']' && s[j] != '>' &&
         !(s[j] == ':' && j + 1 < s.size() && is_space(s[j + 1]))) {
    if (s[j] == '/') ++slashes;
    ++j;
  }
  return slashes >= 2 || (slashes == 1 && j - i > 1 && s[i] == '/') ? j - i : 0;
}

}  // namespace

std::string normalize_message(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char c = s[i];
    const bool word_before = i > 0 && is_word(s[i - 1]);
    if (is_space(c)) {
      while (i < s.size() && is_space(s[i])) ++i;
      if (!out.empty() && i < s.size()) out.push_back(' ');
      continue;
    }
    if (std::size_t n = word_before ? 0 : hex_number_length(s, i); n > 0) {
      i += n;
      out += "<hex>";
      continue;
    }
    if (!word_before && (starts_with_at(s, i, "cuda:") || starts_with_at(s, i, "mps:") ||
                         starts_with_at(s, i, "xpu:") || starts_with_at(s, i, "cpu:"))) {
      std::size_t colon = s.find(':', i);
      std::size_t j = colon + 1;
      if (j < s.size() && s[j] == '-') ++j;
      if (j < s.size() && is_digit(s[j])) {
        while (j < s.size() && is_digit(s[j])) ++j;
        out.append(s.substr(i, colon + 1 - i)).append("<i>");
        i = j;
        continue;
      }
    }
    if (c == '[') {
      if (std::size_t n = int_list_length(s, i); n > 0) {
        out += "[<shape>]";
        i += n;
        continue;
      }
    }
    if (!word_before) {
      if (std::size_t n = path_length(s, i); n > 0) {
        out += "<path>";
        i += n;
        continue;
      }
    }
    if ((c == '\'' || c == '"') && !word_before) {
      std::size_t close = s.find(c, i + 1);
      if (close != std::string_view::npos && close - i - 1 > 40) {
        out.push_back(c);
        out += "<str>";
        out.push_back(c);
        i = close + 1;
        continue;
      }
    }
    // Numbers: not inside an identifier (conv2d, float16), but with units (16GB, 3s) and in
    // dimensions (2x3).
    const bool dimension = i >= 2 && s[i - 1] == 'x' && is_digit(s[i - 2]);
    if ((!word_before &&
         (is_digit(c) || ((c == '-' || c == '.') && i + 1 < s.size() && is_digit(s[i + 1])))) ||
        (dimension && is_digit(c))) {
      std::size_t j = i + ((c == '-' || c == '.') ? 1 : 0);
      if (std::size_t n = number_length(s, j); n > 0) {
        out += "<n>";
        i = j + n;
        continue;
      }
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

std::string failure_signature(std::string_view exception, std::string_view message) {
  std::uint64_t h = 14695981039346656037ULL;
  auto feed = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ULL;
    }
  };
  feed(exception);
  feed("\n");
  feed(normalize_message(message));
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace devshim
