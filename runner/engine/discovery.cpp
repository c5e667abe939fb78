#include "runner/engine/discovery.h"

#include <fmt/format.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/error.h"
#include "runner/engine/frameworks/framework_traits.h"

namespace devshim {

namespace fs = std::filesystem;

bool matches_pattern(const std::string& pattern, const std::string& name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

std::string gtest_shard_suffix(int shard, int shards) {
  return fmt::format(" [shard {} of {}]", shard + 1, shards);
}

std::string TestFile::file_rel() const {
  if (shards <= 1) return rel_path;
  const std::string suffix = gtest_shard_suffix(shard, shards);
  return rel_path.ends_with(suffix) ? rel_path.substr(0, rel_path.size() - suffix.size())
                                    : rel_path;
}

namespace {

// Hidden folders, __pycache__, node_modules, the suite's norecursedirs, and virtual environments
// (a venv's pyvenv.cfg, a conda environment's conda-meta): never a project's tests.
bool is_skipped_dir(const fs::path& p, const Suite& suite) {
  const std::string name = p.filename().string();
  if (name.empty() || name[0] == '.' || name == "__pycache__" || name == "node_modules") {
    return true;
  }
  if (std::any_of(suite.norecursedirs.begin(), suite.norecursedirs.end(),
                  [&](const std::string& pattern) { return matches_pattern(pattern, name); })) {
    return true;
  }
  std::error_code ec;
  return fs::exists(p / "pyvenv.cfg", ec) || fs::is_directory(p / "conda-meta", ec);
}

bool matches_any(const std::vector<std::string>& patterns, const std::string& name) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pattern) { return matches_pattern(pattern, name); });
}

// rel_path of p inside root, or empty when p is not inside it.
std::string relative_inside(const fs::path& p, const fs::path& root) {
  fs::path rel = p.lexically_relative(root);
  if (rel.empty()) return "";
  std::string s = rel.generic_string();
  if (s == ".") return ".";
  if (s.rfind("..", 0) == 0) return "";
  return s;
}

// Each file as `shards` entries in a row (shard 0 … shards-1); a file of named tests runs
// unsharded.
std::vector<TestFile> in_shards(const std::vector<TestFile>& files, int shards) {
  std::vector<TestFile> out;
  out.reserve(files.size() * static_cast<std::size_t>(shards));
  for (const TestFile& f : files) {
    if (!f.tests.empty()) {
      out.push_back(f);
      continue;
    }
    for (int i = 0; i < shards; ++i) {
      TestFile shard{f.rel_path + gtest_shard_suffix(i, shards), f.abs_path, i, shards};
      shard.keyword = f.keyword;
      out.push_back(std::move(shard));
    }
  }
  return out;
}

}  // namespace

std::vector<TestFile> discover_test_files(const Suite& suite,
                                          const std::vector<std::string>& targets) {
  const fs::path root = suite.tests_root().lexically_normal();
  std::vector<std::string> wanted;
  std::string keyword;
  for (const std::string& t : targets) {
    if (t.starts_with(kKeywordTarget)) {
      keyword = t.substr(kKeywordTarget.size());
    } else {
      wanted.push_back(t);
    }
  }
  if (wanted.empty())
    wanted = suite.targets.empty() ? std::vector<std::string>{"."} : suite.targets;

  // rel_path → index in files; whole: files named without "::" (they run every test).
  std::map<std::string, std::size_t> index;
  std::set<std::string> whole;
  std::vector<TestFile> files;
  auto add = [&](const fs::path& abs, const std::string& test) {
    std::string rel = relative_inside(abs, root);
    auto [it, inserted] = index.emplace(rel, files.size());
    if (inserted) files.push_back(TestFile{rel, abs});
    TestFile& f = files[it->second];
    if (test.empty()) {
      whole.insert(rel);
      f.tests.clear();
    } else if (whole.count(rel) == 0 &&
               std::find(f.tests.begin(), f.tests.end(), test) == f.tests.end()) {
      f.tests.push_back(test);
    }
  };

  // Programs (GoogleTest binaries) are found by being executable, Python files by the pattern.
  const bool gtest = !framework_traits(suite.framework).runs_python();
  auto executable = [](const fs::path& p) { return ::access(p.c_str(), X_OK) == 0; };

  const std::string tests_prefix = fs::path(suite.tests_dir).lexically_normal().generic_string();
  for (const std::string& target : wanted) {
    std::string t = target;
    std::string test;  // "FILE::REST": REST
    if (const std::size_t sep = target.find("::"); sep != std::string::npos) {
      t = target.substr(0, sep);
      test = target.substr(sep + 2);
      if (t.empty() || test.empty()) {
        throw UsageError(fmt::format(
            "target \"{}\": a test target is FILE::TEST (e.g. test_x.py::TestC::test_y)", target));
      }
    }
    fs::path candidate;
    std::error_code ec;
    if (fs::path(t).is_absolute()) {
      candidate = fs::path(t).lexically_normal();
    } else {
      candidate = (root / t).lexically_normal();
      // "tests/pipelines" names the same folder as "pipelines" when it is not itself a folder
      // inside tests/.
      if (!fs::exists(candidate, ec) && !tests_prefix.empty() && tests_prefix != "." &&
          t.rfind(tests_prefix + "/", 0) == 0) {
        candidate = (root / t.substr(tests_prefix.size() + 1)).lexically_normal();
      } else if (!fs::exists(candidate, ec) && t == tests_prefix) {
        candidate = root;
      }
    }
    if (relative_inside(candidate, root).empty()) {
      throw UsageError(
          fmt::format("target \"{}\" is outside the tests folder {}", target, root.string()));
    }
    if (fs::is_regular_file(candidate, ec)) {
      if (gtest && !executable(candidate)) {
        throw UsageError(fmt::format(
            "target \"{}\" is not executable (a gtest suite runs test binaries)", target));
      }
      add(candidate, test);
      continue;
    }
    if (!test.empty()) {
      throw UsageError(fmt::format("target \"{}\": {} is no file of the tests folder {}", target, t,
                                   root.string()));
    }
    if (!fs::is_directory(candidate, ec)) {
      throw UsageError(fmt::format("unknown target \"{}\": no file or folder {} in {}", target,
                                   candidate.lexically_relative(root).generic_string(),
                                   root.string()));
    }
    std::vector<fs::path> found;
    fs::recursive_directory_iterator it(candidate, fs::directory_options::skip_permission_denied,
                                        ec);
    if (ec) throw UsageError(fmt::format("cannot read {}: {}", candidate.string(), ec.message()));
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) {
        throw RuntimeError(fmt::format("cannot read {}: {}", candidate.string(), ec.message()));
      }
      const fs::directory_entry& entry = *it;
      if (entry.is_directory(ec)) {
        if (is_skipped_dir(entry.path(), suite)) it.disable_recursion_pending();
        continue;
      }
      if (entry.is_regular_file(ec) &&
          matches_any(suite.patterns, entry.path().filename().string()) &&
          (!gtest || executable(entry.path()))) {
        found.push_back(entry.path().lexically_normal());
      }
    }
    std::sort(found.begin(), found.end());
    for (const auto& f : found) add(f, "");
  }
  std::sort(files.begin(), files.end(),
            [](const TestFile& a, const TestFile& b) { return a.rel_path < b.rel_path; });
  for (TestFile& f : files) f.keyword = keyword;
  if (!gtest || suite.gtest_shards <= 1) return files;
  return in_shards(files, suite.gtest_shards);
}

std::vector<std::string> locks_of(const Suite& suite, const std::string& rel_path) {
  std::vector<std::string> held;
  for (const auto& [name, patterns] : suite.locks) {
    if (std::any_of(patterns.begin(), patterns.end(),
                    [&](const std::string& p) { return matches_pattern(p, rel_path); })) {
      held.push_back(name);
    }
  }
  return held;
}

std::vector<std::vector<std::string>> locks_of(const Suite& suite,
                                               const std::vector<TestFile>& files) {
  std::vector<std::vector<std::string>> out;
  out.reserve(files.size());
  for (const TestFile& f : files) out.push_back(locks_of(suite, f.rel_path));
  return out;
}

}  // namespace devshim
