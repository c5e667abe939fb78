#include "runner/engine/pytest_config.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "runner/engine/config_files.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

constexpr const char* kOptions[] = {"testpaths", "python_files", "norecursedirs", "pythonpath"};

std::optional<std::string> read_text(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string>& option(PytestConfig& c, const std::string& name) {
  if (name == "testpaths") return c.testpaths;
  if (name == "python_files") return c.python_files;
  if (name == "norecursedirs") return c.norecursedirs;
  return c.pythonpath;
}

// The options of one section or table, each value made words by `words`; nullopt without it.
template <typename Values, typename Words>
std::optional<PytestConfig> config_of(const fs::path& file, const char* section,
                                      const std::optional<Values>& values, Words words) {
  if (!values) return std::nullopt;
  PytestConfig c;
  c.file = file;
  c.section = fmt::format("[{}]", section);
  for (const char* name : kOptions) {
    if (auto it = values->find(name); it != values->end()) option(c, name) = words(it->second);
  }
  return c;
}

// An INI file's section: each option a line of words, pytest's "args" and "paths" types.
std::optional<PytestConfig> from_ini(const fs::path& file, const std::string& text,
                                     const char* section) {
  return config_of(file, section, ini_section(text, section),
                   [](const std::string& value) { return split_words(value); });
}

// pyproject.toml: a list as its elements, a string as an INI value would be.
std::optional<PytestConfig> from_toml(const fs::path& file, const std::string& text,
                                      const char* table) {
  return config_of(file, table, toml_table(text, table), [](const TomlStrings& value) {
    return value.array || value.items.empty() ? value.items : split_words(value.items.front());
  });
}

}  // namespace

std::string PytestConfig::where() const {
  return fmt::format("{} {}", file.filename().string(), section);
}

std::optional<PytestConfig> read_pytest_config(const fs::path& root) {
  // pytest.ini and .pytest.ini are pytest's whatever they hold.
  for (const char* name : {"pytest.ini", ".pytest.ini"}) {
    if (auto text = read_text(root / name)) {
      if (auto c = from_ini(root / name, *text, "pytest")) return c;
      PytestConfig empty;
      empty.file = root / name;
      empty.section = "(no [pytest] section)";
      return empty;
    }
  }
  if (auto text = read_text(root / "pyproject.toml")) {
    if (auto c = from_toml(root / "pyproject.toml", *text, "tool.pytest.ini_options")) return c;
    if (auto c = from_toml(root / "pyproject.toml", *text, "tool.pytest")) return c;
  }
  if (auto text = read_text(root / "tox.ini")) {
    if (auto c = from_ini(root / "tox.ini", *text, "pytest")) return c;
  }
  if (auto text = read_text(root / "setup.cfg")) {
    if (auto c = from_ini(root / "setup.cfg", *text, "tool:pytest")) return c;
  }
  return std::nullopt;
}

const std::vector<std::string>& pytest_default_python_files() {
  static const std::vector<std::string> files{"test_*.py", "*_test.py"};
  return files;
}

const std::vector<std::string>& pytest_default_norecursedirs() {
  static const std::vector<std::string> dirs{"*.egg", ".*",           "_darcs", "build", "CVS",
                                             "dist",  "node_modules", "venv",   "{arch}"};
  return dirs;
}

}  // namespace devshim
