// Turning TARGET arguments into the sorted list of test files a run executes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/engine/suite.h"

namespace devshim {

/// A test file of a run. rel_path is relative to the tests folder, with '/' separators
/// ("pipelines/test_pipelines_fill_mask.py"); it names the file in logs, the database and reports.
/// A gtest binary run in shards is one TestFile per shard, named rel_path + gtest_shard_suffix
/// ("ops/math_test [shard 2 of 4]"); shard is 0-based (GTEST_SHARD_INDEX).
struct TestFile {
  std::string rel_path;
  std::filesystem::path abs_path;
  int shard = 0;
  int shards = 1;  ///< 1: the whole file

  /// The file's own path in the tests folder: rel_path without the shard suffix.
  std::string file_rel() const;
};

/// " [shard 2 of 4]" for shard index 1 of 4 (numbered from 1 for people).
std::string gtest_shard_suffix(int shard, int shards);

/// Resolves targets (files or folders, relative to the tests folder; a leading "<tests_dir>/" and
/// absolute paths inside the tests folder are accepted too) into files. No target means the whole
/// tests folder. Folders are searched recursively for names matching suite.pattern, skipping
/// hidden folders and __pycache__; a file named explicitly is taken whatever its name. For the
/// gtest framework only executable files count (X_OK): a folder's other files are passed over,
/// and a target file that is not executable is an error.
///
/// Returns files sorted by rel_path, each once; with suite.gtest_shards = N > 1, each file
/// becomes N entries (shard 0 … N-1) in a row. Throws UsageError for a target that does not
/// exist or lies outside the tests folder.
std::vector<TestFile> discover_test_files(const Suite& suite,
                                          const std::vector<std::string>& targets);

/// fnmatch(3) without flags: '*', '?', '[...]'.
bool matches_pattern(const std::string& pattern, const std::string& name);

}  // namespace devshim
