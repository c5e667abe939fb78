// Turning TARGET arguments into the sorted list of test files a run executes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/engine/suite.h"

namespace devshim {

/// A test file of a run. rel_path is relative to the tests folder, with '/' separators
/// ("pipelines/test_pipelines_fill_mask.py"); it names the file in logs, the database and reports.
/// A gtest binary run in shards is one TestFile per shard, named rel_path + gtest_shard_suffix
/// ("ops/math_test [shard 2 of 4]"); shard is 0-based (GTEST_SHARD_INDEX).
struct TestFile {
  TestFile() = default;
  TestFile(std::string rel, std::filesystem::path abs, int shard_index = 0, int shard_count = 1)
      : rel_path(std::move(rel)),
        abs_path(std::move(abs)),
        shard(shard_index),
        shards(shard_count) {}

  std::string rel_path;
  std::filesystem::path abs_path;
  int shard = 0;
  int shards = 1;  ///< 1: the whole file
  /// Test-level targets ("FILE::REST"): the tests of the file to run, each REST as given
  /// (pytest, unittest: "TestC::test_y[p]"; gtest: "Suite.Test"); empty: every test.
  std::vector<std::string> tests;
  /// `-k EXPR`: the framework's own keyword selection (pytest and unittest -k; gtest:
  /// --gtest_filter=*EXPR*); empty: none.
  std::string keyword;

  /// The file's own path in the tests folder: rel_path without the shard suffix.
  std::string file_rel() const;
};

/// " [shard 2 of 4]" for shard index 1 of 4 (numbered from 1 for people).
std::string gtest_shard_suffix(int shard, int shards);

/// A target that selects by keyword: "-k=EXPR" (what `-k EXPR` adds to a run's targets).
inline constexpr std::string_view kKeywordTarget = "-k=";

/// Resolves targets (files or folders, relative to the tests folder; a leading "<tests_dir>/" and
/// absolute paths inside the tests folder are accepted too) into files. No target means the
/// suite's own targets, else the whole tests folder. "FILE::REST" names tests of one file
/// (TestFile::tests; the file named alone as well runs whole), "-k=EXPR" a keyword every file gets
/// (TestFile::keyword). Folders are searched recursively for names matching one of
/// suite.patterns, skipping hidden folders, __pycache__, node_modules, those matching
/// suite.norecursedirs and virtual environments (pyvenv.cfg or conda-meta inside); a file named
/// explicitly is taken whatever its name. For the gtest framework only executable files count
/// (X_OK): a folder's other files are passed over, and a target file that is not executable is an
/// error.
///
/// Returns files sorted by rel_path, each once; with suite.gtest_shards = N > 1, each file
/// becomes N entries (shard 0 … N-1) in a row. Throws UsageError for a target that does not
/// exist or lies outside the tests folder.
std::vector<TestFile> discover_test_files(const Suite& suite,
                                          const std::vector<std::string>& targets);

/// fnmatch(3) without flags: '*', '?', '[...]'.
bool matches_pattern(const std::string& pattern, const std::string& name);

/// The names of the suite's locks whose patterns match a test file's path relative to the tests
/// folder (sorted, each once).
std::vector<std::string> locks_of(const Suite& suite, const std::string& rel_path);

/// locks_of for each file's rel_path (what its process holds: plan_process), in the order given;
/// a gtest shard is matched with its suffix, as its process is.
std::vector<std::vector<std::string>> locks_of(const Suite& suite,
                                               const std::vector<TestFile>& files);

}  // namespace devshim
