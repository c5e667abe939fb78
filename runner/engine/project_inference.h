// `runner PATH` on a project that has no suite file: what its suite file would say, inferred from
// the project's own files the way pytest finds its root, configuration and tests (docs/suites.md,
// "Without a suite file"), and the suite file `runner init` writes of it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/engine/environment.h"
#include "runner/engine/suite.h"

namespace devshim {

/// The file name of the suite file `runner init` writes into the project root, which a later
/// `runner PATH` in that project reads.
inline constexpr const char* kKeptSuiteFile = "devshim.json";

/// One inferred value and where it came from, for the run's first lines.
struct Inferred {
  std::string key;    ///< the suite file's key ("tests_dir"), or "source_url" when there is none
  std::string value;  ///< as people read it ("tests", "none")
  std::string from;   ///< where it came from ("the root's tests/ folder", "$VIRTUAL_ENV")
};

struct InferredSuite {
  /// As load_suite gives a suite: paths absolute; file is the tests folder, python_origin says
  /// where the interpreter came from.
  Suite suite;
  /// Interpreter as the suite file writes it: a path relative to the project root when inside
  /// it, else absolute, or a name looked up in PATH ("python3").
  std::string python_written;
  bool norecursedirs_configured = false;  ///< norecursedirs is the project's, not pytest's default
  std::vector<Inferred> facts;            ///< in the order the suite file lists its keys
};

/// The project root of path (a folder or a file in it): the nearest folder at or above it that
/// holds pyproject.toml, setup.py, setup.cfg, pytest.ini, .pytest.ini, tox.ini or .git, with the
/// marker found; path's own folder when none does (marker empty).
struct ProjectRoot {
  std::filesystem::path root;  ///< absolute, normalized
  std::string marker;
};
ProjectRoot find_project_root(const std::filesystem::path& path);

/// Infers the suite of the project `path` lies in (a project folder, its tests folder, a folder or
/// a file of tests). python: --python as given (empty: inferred: $VIRTUAL_ENV, $CONDA_PREFIX, the
/// project's .venv, python3 in PATH); env: the runner's environment (git and the interpreter run
/// with it). Runs git (the remote) and, for a src/ layout, the interpreter (is the package
/// installed?). Throws UsageError when path does not exist.
InferredSuite infer_suite(const std::filesystem::path& path, const std::string& python,
                          const Environment& env);

/// The suite file of an inferred suite, written into its project root: its inferred values and
/// nothing else, as JSON text (docs/suites.md's keys and order).
std::string inferred_suite_json(const InferredSuite& inferred);

}  // namespace devshim
