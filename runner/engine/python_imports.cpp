#include "runner/engine/python_imports.h"

#include <fstream>

#include "parsers/text.h"

namespace devshim {

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The name starting at text[i] (letters, digits, '_'), i moved past it.
std::string take_name(const std::string& text, std::size_t& i) {
  const std::size_t start = i;
  while (i < text.size() && is_name_char(text[i])) ++i;
  return text.substr(start, i - start);
}

void skip_spaces(const std::string& text, std::size_t& i) {
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
}

// `import a.b as c, d`: each module's first name.
void read_import(const std::string& line, std::size_t i, std::set<std::string>& out) {
  for (;;) {
    skip_spaces(line, i);
    const std::string name = take_name(line, i);
    if (name.empty()) return;
    out.insert(name);
    while (i < line.size() && line[i] != ',' && line[i] != '#' && line[i] != ';') ++i;
    if (i >= line.size() || line[i] != ',') return;
    ++i;
  }
}

}  // namespace

std::string top_level_package(const std::string& module) {
  const std::string name = module.starts_with('?') ? module.substr(1) : module;
  return name.substr(0, name.find('.'));
}

std::set<std::string> imported_packages(const std::filesystem::path& file) {
  std::set<std::string> out;
  std::ifstream in(file);
  std::string raw;
  while (std::getline(in, raw)) {
    const std::string line(ltrim(raw));
    if (line.starts_with("import ") || line.starts_with("import\t")) {
      read_import(line, 7, out);
    } else if (line.starts_with("from ") || line.starts_with("from\t")) {
      std::size_t i = 5;
      skip_spaces(line, i);
      const std::string name = take_name(line, i);  // empty for a relative import
      if (!name.empty()) out.insert(name);
    }
  }
  return out;
}

}  // namespace devshim
