#include "runner/engine/config_files.h"

#include "parsers/text.h"

namespace devshim {

namespace {

bool is_ini_comment(std::string_view line) {
  const std::string_view t = ltrim(line);
  return !t.empty() && (t.front() == '#' || t.front() == ';');
}

// The name of a section header line ("[tool:pytest]  # x" → "tool:pytest"); nullopt for other
// lines.
std::optional<std::string_view> ini_header(std::string_view line) {
  if (line.empty() || line.front() != '[') return std::nullopt;
  for (const char c : {'#', ';'}) {
    if (const auto at = line.find(c); at != std::string_view::npos) line = line.substr(0, at);
  }
  line = rtrim(line);
  if (line.size() < 2 || line.back() != ']') return std::nullopt;
  return trim(line.substr(1, line.size() - 2));
}

}  // namespace

std::optional<std::map<std::string, std::string>> ini_section(std::string_view text,
                                                              std::string_view section) {
  std::optional<std::map<std::string, std::string>> found;
  bool inside = false;
  std::string* last = nullptr;  // the value continuation lines extend
  for (const std::string_view raw : lines_of(text)) {
    const std::string_view line = rtrim(raw);
    if (line.empty() || is_ini_comment(line)) continue;
    if (auto header = ini_header(line)) {
      inside = *header == section;
      if (inside && !found) found.emplace();
      last = nullptr;
      continue;
    }
    if (!inside) continue;
    if (is_blank(line.front())) {  // a continuation line
      if (last != nullptr) *last += (last->empty() ? "" : "\n") + std::string(trim(line));
      continue;
    }
    std::size_t sep = line.find('=');
    if (const std::size_t colon = line.find(':'); colon < sep) sep = colon;
    if (sep == std::string_view::npos) {
      last = nullptr;
      continue;
    }
    last = &(*found)[std::string(trim(line.substr(0, sep)))];
    *last = std::string(trim(line.substr(sep + 1)));
  }
  return found;
}

std::vector<std::string> split_words(std::string_view value) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (const char c : value) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (is_blank(c)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

namespace {

// A reader of the TOML pyproject.toml needs here: table headers, and keys whose value is a
// string or an array of strings.
class TomlReader {
 public:
  explicit TomlReader(std::string_view text) : text_(text) {}

  std::optional<std::map<std::string, TomlStrings>> table(std::string_view name) {
    std::optional<std::map<std::string, TomlStrings>> found;
    bool inside = false;
    while (skip_space_and_comments(), at_ < text_.size()) {
      if (text_[at_] == '[') {
        std::string header = read_header();
        inside = header == name;
        if (inside && !found) found.emplace();
        continue;
      }
      std::string key = read_key();
      skip_inline_space();
      if (key.empty() || !take('=')) {
        skip_line();
        continue;
      }
      skip_inline_space();
      std::optional<TomlStrings> value = read_value();
      if (inside && value) (*found)[key] = std::move(*value);
    }
    return found;
  }

 private:
  void skip_inline_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  void skip_line() {
    while (at_ < text_.size() && text_[at_] != '\n') ++at_;
  }
  // Blanks, newlines and comments, as between keys and between an array's elements.
  void skip_space_and_comments() {
    while (at_ < text_.size()) {
      if (is_blank(text_[at_])) {
        ++at_;
      } else if (text_[at_] == '#') {
        skip_line();
      } else {
        return;
      }
    }
  }
  bool take(char c) {
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  // "[ tool . pytest ]" → "tool.pytest"; an array-of-tables header "[[x]]" gives "[x]", no name.
  std::string read_header() {
    std::string name;
    ++at_;
    while (at_ < text_.size() && text_[at_] != '\n') {
      const char c = text_[at_++];
      if (c == ']') break;
      if (c == '"' || c == '\'') {
        --at_;
        name += read_string().value_or("");
      } else if (c != ' ' && c != '\t') {
        name += c;
      }
    }
    skip_line();
    return name;
  }

  // A bare or quoted key, dotted keys joined with '.'.
  std::string read_key() {
    std::string key;
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '"' || c == '\'') {
        key += read_string().value_or("");
      } else if (is_identifier_char(c) || c == '-' || c == '.') {
        key += c;
        ++at_;
      } else if (c == ' ' || c == '\t') {
        skip_inline_space();
        if (at_ < text_.size() && text_[at_] != '.' && text_[at_] != '=') return key;
      } else {
        return key;
      }
    }
    return key;
  }

  // A basic ("...", with escapes) or literal ('...') string on one line; nullopt for a
  // multi-line one (skipped whole) or an unterminated one.
  std::optional<std::string> read_string() {
    const char quote = text_[at_];
    if (text_.substr(at_, 3) == std::string(3, quote)) {
      const auto end = text_.find(std::string(3, quote), at_ + 3);
      at_ = end == std::string_view::npos ? text_.size() : end + 3;
      return std::nullopt;
    }
    std::string out;
    ++at_;
    while (at_ < text_.size() && text_[at_] != '\n') {
      const char c = text_[at_++];
      if (c == quote) return out;
      if (c == '\\' && quote == '"' && at_ < text_.size()) {
        const char e = text_[at_++];
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          default:
            out += e;  // \" \\ and the rest as the character itself
        }
      } else {
        out += c;
      }
    }
    return std::nullopt;
  }

  // A string, an array of strings, or something else (skipped: nullopt).
  std::optional<TomlStrings> read_value() {
    if (at_ >= text_.size()) return std::nullopt;
    const char c = text_[at_];
    if (c == '"' || c == '\'') {
      auto s = read_string();
      skip_line();
      if (!s) return std::nullopt;
      return TomlStrings{{std::move(*s)}, false};
    }
    if (c == '[') {
      auto items = read_array();
      if (!items) return std::nullopt;
      return TomlStrings{std::move(*items), true};
    }
    skip_other_value();
    return std::nullopt;
  }

  std::optional<std::vector<std::string>> read_array() {
    std::vector<std::string> items;
    bool only_strings = true;
    ++at_;
    while (skip_space_and_comments(), at_ < text_.size()) {
      const char c = text_[at_];
      if (c == ']') {
        ++at_;
        skip_line();
        if (!only_strings) return std::nullopt;
        return items;
      }
      if (c == ',') {
        ++at_;
      } else if (c == '"' || c == '\'') {
        if (auto s = read_string()) {
          items.push_back(std::move(*s));
        } else {
          only_strings = false;
        }
      } else if (c == '[') {
        read_array();  // a nested array: no list of strings
        only_strings = false;
      } else {
        only_strings = false;
        while (at_ < text_.size() && text_[at_] != ',' && text_[at_] != ']' && text_[at_] != '\n') {
          ++at_;
        }
      }
    }
    return std::nullopt;
  }

  // A number, boolean, date or inline table: to the end of its braces, then of its line.
  void skip_other_value() {
    int depth = 0;
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '"' || c == '\'') {
        read_string();
        continue;
      }
      if (c == '{') ++depth;
      if (c == '}') --depth;
      if (c == '\n' && depth <= 0) return;
      ++at_;
    }
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace

std::optional<std::map<std::string, TomlStrings>> toml_table(std::string_view text,
                                                             std::string_view table) {
  return TomlReader(text).table(table);
}

}  // namespace devshim
