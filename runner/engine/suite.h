// A test suite described by SUITE_DIR/suite.json (format: docs/suites.md).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/engine/environment.h"

namespace devshim {

enum class Framework { kUnittest, kPytest, kGtest };

/// "unittest" / "pytest" / "gtest"; the inverse of parse_framework.
const char* framework_name(Framework f);
std::optional<Framework> parse_framework(const std::string& name);

struct Suite {
  /// Absolute path of suite.json; of a suite inferred from a project (runner/engine/
  /// project_inference.h), the tests folder, which `runner` given again infers it from.
  std::filesystem::path file;
  std::string name;                    ///< short identifier: runs are grouped by it
  std::filesystem::path project_root;  ///< absolute; exists (checked by load_suite)
  std::string project_root_env;        ///< variable that overrode project_root, if any names one
  std::string tests_dir = "tests";     ///< relative to project_root
  /// fnmatch patterns of the files found in folders, a file matching any of them ("*_test" by
  /// default for gtest).
  std::vector<std::string> patterns{"test_*.py"};
  /// The TARGETs a run that names none takes (pytest's testpaths); empty: the whole tests folder.
  std::vector<std::string> targets;
  /// fnmatch patterns of folder names discovery does not enter, besides hidden ones, __pycache__,
  /// node_modules and virtual environments (pytest's norecursedirs; its defaults for pytest).
  std::vector<std::string> norecursedirs;
  Framework framework = Framework::kUnittest;
  std::string python =
      "python3";  ///< interpreter: a PATH name, or a path (resolved); unused by gtest
  /// Where `python` was given, for messages; empty: the suite file's "python".
  std::string python_origin;
  std::vector<std::filesystem::path> pythonpath;  ///< absolute (relative ones: to project_root)
  std::map<std::string, std::string> env;         ///< extra environment for every test process
  std::vector<std::string> args;                  ///< extra framework arguments, before the file
  /// Python suites: modules the warm parent imports before forking test files (besides torch and
  /// the framework), e.g. "transformers" (runner/engine/zygote.h).
  std::vector<std::string> preload;
  double timeout_s = 900;  ///< per-file timeout
  std::string source_url;  ///< template with {commit}, {path}, {line}; may be empty
  /// gtest: each binary runs as this many processes (GTEST_TOTAL_SHARDS), each one a test file of
  /// the run; 1 = unsharded.
  int gtest_shards = 1;
  /// Lock name -> fnmatch patterns of files (relative to the tests folder, '*' crossing '/'):
  /// files that hold one lock never run at the same time, as ctest's RESOURCE_LOCK (a fixed
  /// port, a shared scratch folder). Sorted by name; empty: every file runs beside any other.
  std::map<std::string, std::vector<std::string>> locks;

  std::filesystem::path tests_root() const { return project_root / tests_dir; }
  /// Where `python` came from: python_origin, else "\"python\" of <file>".
  std::string python_from() const;
  /// The patterns as people read them: "test_*.py or *_test.py".
  std::string patterns_text() const;
};

/// Reads SUITE_DIR/suite.json (or the file itself when given a file) and resolves its paths.
///
/// project_root is relative to the suite file's folder unless the variable of env named by
/// project_root_env is set and non-empty, in which case its value is used. A `python` value
/// containing '/' is resolved relative to the suite file's folder. `pattern` (a pattern or a list
/// of them) defaults to "*_test" for the gtest framework; `norecursedirs` to pytest's defaults
/// for pytest; `gtest_shards` (an integer ≥ 1) is accepted only with gtest.
///
/// Throws UsageError naming the file, line and key for a missing file, malformed JSON, an unknown
/// key, a value of the wrong type, or a project root / tests folder that does not exist.
Suite load_suite(const std::filesystem::path& suite_dir_or_file, const Environment& env);

}  // namespace devshim
