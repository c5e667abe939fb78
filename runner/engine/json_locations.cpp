#include "runner/engine/json_locations.h"

#include <vector>

namespace devshim {
std::string json_pointer_token(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// One open container while scanning: its pointer, whether it is an array, and the index of the
// next element (arrays) or the last key seen (objects).
struct Frame {
  std::string pointer;
  bool is_array = false;
  int next_index = 0;
  std::string pending_key;
  bool expecting_value = false;  // objects: after ':'; arrays: after '[' or ','
};

}  // namespace

JsonMembers json_members(std::string_view text) {
  JsonMembers members;
  std::map<std::string, int>& lines = members.lines;
  std::vector<Frame> stack;
  int line = 1;

  // Called at the first character of a value: records an array element's line.
  auto begin_value = [&]() -> std::string {
    if (stack.empty()) return "";
    Frame& top = stack.back();
    if (top.is_array) {
      std::string p = top.pointer + "/" + std::to_string(top.next_index++);
      lines.emplace(p, line);
      return p;
    }
    return top.pointer + "/" + json_pointer_token(top.pending_key);
  };

  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      continue;
    }
    if (c == '"') {
      // Scan the string, collecting its (unescaped only for simple escapes) contents.
      std::string s;
      int start_line = line;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) {
          ++i;
          switch (text[i]) {
            case 'n':
              s += '\n';
              break;
            case 't':
              s += '\t';
              break;
            default:
              s += text[i];
              break;
          }
        } else {
          if (text[i] == '\n') ++line;
          s += text[i];
        }
      }
      // Is this string a key? Look ahead past whitespace for ':'.
      std::size_t j = i + 1;
      while (j < text.size() &&
             (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' || text[j] == '\n')) {
        ++j;
      }
      if (!stack.empty() && !stack.back().is_array && j < text.size() && text[j] == ':') {
        Frame& top = stack.back();
        top.pending_key = s;
        std::string pointer = top.pointer + "/" + json_pointer_token(s);
        if (!lines.emplace(pointer, start_line).second) {
          members.duplicates.emplace_back(std::move(pointer), start_line);
        }
      } else {
        begin_value();
      }
      continue;
    }
    if (c == '{' || c == '[') {
      std::string p = begin_value();
      Frame f;
      f.pointer = p;
      f.is_array = (c == '[');
      stack.push_back(std::move(f));
      continue;
    }
    if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    if (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\r') continue;
    // Start of a literal (number, true, false, null): consume it.
    begin_value();
    while (i + 1 < text.size() && text[i + 1] != ',' && text[i + 1] != '}' && text[i + 1] != ']' &&
           text[i + 1] != '\n' && text[i + 1] != ' ') {
      ++i;
    }
  }
  return members;
}

TextPosition position_of_offset(std::string_view text, std::size_t offset) {
  TextPosition pos;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

}  // namespace devshim
