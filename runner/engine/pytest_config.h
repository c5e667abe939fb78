// pytest's configuration of a project, found in the project root as pytest finds it there: the
// first of pytest.ini, .pytest.ini, pyproject.toml ([tool.pytest.ini_options], or pytest 9's
// [tool.pytest]), tox.ini ([pytest]) and setup.cfg ([tool:pytest]) that holds it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace devshim {

struct PytestConfig {
  std::filesystem::path file;  ///< the configuration file (absolute)
  std::string section;         ///< where in it: "[pytest]", "[tool.pytest.ini_options]", ...
  /// The options the runner's inference reads, each as pytest splits it; empty when unset.
  std::vector<std::string> testpaths;
  std::vector<std::string> python_files;
  std::vector<std::string> norecursedirs;
  std::vector<std::string> pythonpath;

  /// "pyproject.toml [tool.pytest.ini_options]": where it was found, for people.
  std::string where() const;
};

/// The pytest configuration in folder `root` (not above it); nullopt when there is none. A file
/// that cannot be read counts as absent.
std::optional<PytestConfig> read_pytest_config(const std::filesystem::path& root);

/// pytest's default `python_files`: test_*.py and *_test.py.
const std::vector<std::string>& pytest_default_python_files();
/// pytest's default `norecursedirs`.
const std::vector<std::string>& pytest_default_norecursedirs();

}  // namespace devshim
