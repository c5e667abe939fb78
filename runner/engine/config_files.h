// Readers of the configuration files Python projects keep their test settings in: INI files
// (pytest.ini, tox.ini, setup.cfg) and pyproject.toml. Each reads the one section or table asked
// for, as far as a test runner needs it (strings and lists of strings), and never throws on what
// it does not understand: such a value is left out.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace devshim {

/// A section's keys and their values as written (a value continued on indented lines joined with
/// '\n'); nullopt when the text has no such section. Read as pytest's iniconfig reads INI files:
/// `[section]` headers, `key = value` or `key: value`, lines starting with '#' or ';' are
/// comments, and so is the rest of a line from " #" or " ;".
std::optional<std::map<std::string, std::string>> ini_section(std::string_view text,
                                                              std::string_view section);

/// A TOML value the readers keep: a string, or an array of strings.
struct TomlStrings {
  std::vector<std::string> items;  ///< the string, or the array's elements
  bool array = false;
};

/// A TOML table's keys whose values are a string or an array of strings (over several lines if
/// need be); nullopt when the text has no such table (header `[a.b]`, spaces around the dots
/// allowed). Other values (numbers, booleans, inline tables, multi-line strings) are left out.
std::optional<std::map<std::string, TomlStrings>> toml_table(std::string_view text,
                                                             std::string_view table);

/// An INI value split into words as pytest splits its list options (shlex-like: whitespace
/// separates, single and double quotes group).
std::vector<std::string> split_words(std::string_view value);

}  // namespace devshim
