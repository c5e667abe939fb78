// Turning TARGET arguments into the sorted list of test files a run executes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/suite.h"

namespace devshim {

/// A test file of a run. rel_path is relative to the tests folder, with '/' separators
/// ("pipelines/test_pipelines_fill_mask.py"); it names the file in logs, the database and reports.
struct TestFile {
  std::string rel_path;
  std::filesystem::path abs_path;
};

/// Resolves targets (files or folders, relative to the tests folder; a leading "<tests_dir>/" and
/// absolute paths inside the tests folder are accepted too) into files. No target means the whole
/// tests folder. Folders are searched recursively for names matching suite.pattern, skipping
/// hidden folders and __pycache__; a file named explicitly is taken whatever its name.
///
/// Returns files sorted by rel_path, each once. Throws UsageError for a target that does not
/// exist or lies outside the tests folder.
std::vector<TestFile> discover_test_files(const Suite& suite,
                                          const std::vector<std::string>& targets);

/// fnmatch(3) without flags: '*', '?', '[...]'.
bool matches_pattern(const std::string& pattern, const std::string& name);

}  // namespace devshim
