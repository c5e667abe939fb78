#include "runner/engine/suite_source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <system_error>

#include "base/error.h"
#include "runner/engine/discovery.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

// A test file of PATH's own, with the test it names: "tests/test_x.py::TestC::test_y" as pytest
// takes it.
struct PathAndTest {
  fs::path path;
  std::string test;
};

PathAndTest split_test(const fs::path& path) {
  std::error_code ec;
  const std::string text = path.string();
  const auto sep = text.find("::");
  if (fs::exists(path, ec) || sep == std::string::npos) return {path, ""};
  return {text.substr(0, sep), text.substr(sep + 2)};
}

// Inference found no test file: where it looked, and why there.
[[noreturn]] void no_test_files(const OpenedSuite& opened) {
  const Suite& s = opened.suite;
  std::string why;
  for (const Inferred& f : opened.inferred->facts) {
    if (f.key == "tests_dir") why = f.from;
  }
  const std::vector<std::string>& looked = opened.targets.empty() ? s.targets : opened.targets;
  const auto shown = [](const fs::path& p) {
    const std::string n = p.lexically_normal().string();
    return n.size() > 1 && n.back() == '/' ? n.substr(0, n.size() - 1) : n;
  };
  std::vector<std::string> where;
  where.reserve(looked.size() + 1);
  for (const std::string& t : looked) where.push_back(shown(s.tests_root() / t));
  if (where.empty()) where.push_back(shown(s.tests_root()));
  throw UsageError(fmt::format(
      "no test files: looked for {} in {} ({}) and the folders below it; name the folder or file "
      "that holds the tests, e.g. `runner path/to/tests`",
      s.patterns_text(), fmt::join(where, ", "), why));
}

}  // namespace

bool names_suite_file(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fs::exists(path / "suite.json", ec);
  return path.extension() == ".json";
}

OpenedSuite open_suite(const fs::path& path, const std::string& python, const Environment& env,
                       KeptSuiteFile kept) {
  OpenedSuite opened;
  std::error_code ec;
  if (const fs::file_status status = fs::status(path, ec);
      ec && status.type() != fs::file_type::not_found) {
    throw UsageError(fmt::format("{}: cannot read: {}", path.string(), ec.message()));
  }
  if (names_suite_file(path)) {
    opened.suite = load_suite(path, env);
    return opened;
  }
  const PathAndTest given = split_test(path);
  if (!fs::exists(given.path, ec) ||
      (!given.test.empty() && !fs::is_regular_file(given.path, ec))) {
    throw UsageError(fmt::format(
        "{}: no such file or folder (runner runs a suite file, a folder holding suite.json, or a "
        "project folder, its tests folder or a test file)",
        path.string()));
  }
  const fs::path target = fs::absolute(given.path).lexically_normal();
  const ProjectRoot root = find_project_root(target);
  opened.kept_file = root.root / kKeptSuiteFile;
  if (kept == KeptSuiteFile::kRead && fs::exists(opened.kept_file, ec)) {
    opened.suite = load_suite(opened.kept_file, env);
    opened.kept = true;
  } else {
    opened.inferred = infer_suite(target, python, env);
    opened.suite = opened.inferred->suite;
  }
  // PATH inside the tests folder selects what it names there; the folder itself or the project
  // root, everything.
  const fs::path tests = opened.suite.tests_root().lexically_normal();
  const fs::path rel = target.lexically_relative(tests);
  if (target != root.root && rel != ".") {
    if (rel.empty() || *rel.begin() == "..") {
      throw UsageError(fmt::format("{} lies outside the tests folder {} of {}", path.string(),
                                   tests.string(), opened.kept_file.string()));
    }
    opened.targets.push_back(rel.generic_string() + (given.test.empty() ? "" : "::" + given.test));
  }
  if (opened.inferred && discover_test_files(opened.suite, opened.targets).empty()) {
    no_test_files(opened);
  }
  return opened;
}

}  // namespace devshim
