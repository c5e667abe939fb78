#include "runner/engine/project_inference.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "runner/engine/discovery.h"
#include "runner/engine/git_remote.h"
#include "runner/engine/interpreter_check.h"
#include "runner/engine/launch_plan.h"
#include "runner/engine/pytest_config.h"
#include "runner/engine/python_imports.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

// What makes a folder a project root, in the order a folder's markers are named.
constexpr const char* kMarkers[] = {"pyproject.toml", "setup.py", "setup.cfg", "pytest.ini",
                                    ".pytest.ini",    "tox.ini",  ".git"};

fs::path normal_absolute(const fs::path& p) {
  fs::path n = fs::absolute(p).lexically_normal();
  if (!n.has_filename() && n.has_parent_path() && n != n.root_path()) n = n.parent_path();
  return n;
}

// p's path inside folder ("." for the folder itself), or nullopt when it lies outside.
std::optional<std::string> relative_inside(const fs::path& p, const fs::path& folder) {
  const fs::path rel = p.lexically_relative(folder);
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  return rel.generic_string();
}

bool has_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// A testpaths entry with glob characters, matched one path segment at a time under root.
std::vector<fs::path> expand_glob(const fs::path& root, const std::string& pattern) {
  std::vector<fs::path> found{root};
  for (const fs::path& segment : fs::path(pattern).lexically_normal()) {
    const std::string part = segment.string();
    if (part.empty() || part == ".") continue;
    std::vector<fs::path> next;
    for (const fs::path& dir : found) {
      if (!has_glob(part)) {
        next.push_back(dir / part);
        continue;
      }
      std::error_code ec;
      for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (matches_pattern(part, entry.path().filename().string())) next.push_back(entry.path());
      }
    }
    found = std::move(next);
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The folder that holds every path of paths (each inside root).
fs::path common_folder(const std::vector<fs::path>& paths) {
  fs::path common = paths.front();
  for (const fs::path& p : paths) {
    while (!relative_inside(p, common)) common = common.parent_path();
  }
  return common;
}

// The project's tests folder, with the targets a run without any takes: pytest's testpaths (their
// common folder when there are several), else the root's tests/ or test/ folder, else the root.
struct TestsFolder {
  fs::path dir;
  std::vector<std::string> targets;
  std::string from;
};

std::optional<TestsFolder> from_testpaths(const fs::path& root, const PytestConfig& config) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (const std::string& entry : config.testpaths) {
    for (const fs::path& p :
         has_glob(entry) ? expand_glob(root, entry) : std::vector<fs::path>{root / entry}) {
      const fs::path n = normal_absolute(p);
      if (fs::exists(n, ec) && relative_inside(n, root)) paths.push_back(n);
    }
  }
  if (paths.empty()) return std::nullopt;
  TestsFolder t;
  t.from = fmt::format("testpaths of {}", config.where());
  if (paths.size() == 1 && fs::is_directory(paths.front(), ec)) {
    t.dir = paths.front();
    return t;
  }
  t.dir = common_folder(paths);
  if (t.dir == paths.front()) t.dir = t.dir.parent_path();  // one file: its folder
  for (const fs::path& p : paths) t.targets.push_back(*relative_inside(p, t.dir));
  return t;
}

TestsFolder project_tests(const fs::path& root, const std::optional<PytestConfig>& config) {
  if (config) {
    if (auto t = from_testpaths(root, *config)) return *t;
  }
  std::error_code ec;
  for (const char* name : {"tests", "test"}) {
    if (fs::is_directory(root / name, ec)) {
      return {root / name, {}, fmt::format("the root's {}/ folder", name)};
    }
  }
  return {root, {}, "the project root (no testpaths, tests/ or test/ folder)"};
}

// Framework and where the choice came from: pytest when the project configures it, or has a
// conftest.py, or a test file imports it; unittest otherwise.
std::pair<Framework, std::string> choose_framework(const fs::path& root, const Suite& probe,
                                                   const std::optional<PytestConfig>& config) {
  if (config) return {Framework::kPytest, config->where()};
  std::error_code ec;
  if (fs::is_regular_file(root / "conftest.py", ec)) return {Framework::kPytest, "conftest.py"};
  Suite s = probe;
  s.patterns = {"test*.py", "*_test.py", "conftest.py"};
  const std::vector<TestFile> files = discover_test_files(s, {});
  const auto shown = [&](const TestFile& f) {
    return relative_inside(f.abs_path, root).value_or(f.abs_path.string());
  };
  for (const TestFile& f : files) {
    if (f.abs_path.filename() == "conftest.py") return {Framework::kPytest, shown(f)};
  }
  for (const TestFile& f : files) {
    if (imported_packages(f.abs_path).count("pytest") > 0) {
      return {Framework::kPytest, shown(f) + " imports pytest"};
    }
  }
  return {Framework::kUnittest, "no pytest configuration, conftest.py or test file importing it"};
}

// The interpreter: --python, the activated virtual or conda environment, the project's .venv,
// python3 in PATH.
struct Interpreter {
  std::string path;     ///< absolute, not resolved (a venv's python is a link)
  std::string written;  ///< as the suite file says it
  std::string from;
};

bool executable(const fs::path& p) {
  std::error_code ec;
  return ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p, ec);
}

Interpreter choose_python(const std::string& given, const fs::path& root, const Environment& env) {
  const auto in_root = [&](const fs::path& p) {
    const auto rel = relative_inside(p, root);
    return rel ? *rel : p.string();
  };
  if (!given.empty()) {
    const std::string found = find_executable(given, env);
    const std::string path = found.empty() ? given : normal_absolute(found).string();
    return {path, in_root(path), "--python"};
  }
  for (const auto& [var, what] : {std::pair{"VIRTUAL_ENV", "the activated virtual environment"},
                                  std::pair{"CONDA_PREFIX", "the activated conda environment"}}) {
    const std::string prefix = value_of(env, var);
    if (prefix.empty()) continue;
    const fs::path python = normal_absolute(fs::path(prefix) / "bin" / "python");
    if (executable(python))
      return {python.string(), in_root(python), fmt::format("${}, {}", var, what)};
  }
  const fs::path project_venv = root / ".venv" / "bin" / "python";
  if (executable(project_venv)) {
    return {project_venv.string(), ".venv/bin/python", "the project's .venv"};
  }
  const std::string found = find_executable("python3", env);
  return {found.empty() ? "python3" : found, "python3", "python3 in PATH"};
}

// The packages and modules of a src/ layout: src/<name>/ with a Python file, or src/<name>.py.
std::vector<std::string> src_packages(const fs::path& src) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(src, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || name[0] == '_' || name.find('-') != std::string::npos) {
      continue;
    }
    if (entry.is_directory(ec)) {
      bool python = false;
      for (const auto& inner : fs::directory_iterator(entry.path(), ec)) {
        python = python || inner.path().extension() == ".py";
      }
      if (python) names.push_back(name);
    } else if (entry.path().extension() == ".py") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "src" on PYTHONPATH when the src/ layout's packages are not installed in the interpreter.
std::optional<Inferred> src_layout(const fs::path& root, const Interpreter& python,
                                   const Environment& env, Suite& suite) {
  std::error_code ec;
  if (!fs::is_directory(root / "src", ec)) return std::nullopt;
  const std::vector<std::string> packages = src_packages(root / "src");
  if (packages.empty()) return std::nullopt;
  Environment probe_env = env;
  activate_interpreter_environment(probe_env, python.path);
  const auto missing = missing_modules(python.path, packages, probe_env, root);
  const std::string names = fmt::format("src/{}", fmt::join(packages, ", src/"));
  if (missing && missing->size() < packages.size()) {
    return Inferred{"pythonpath", "none", fmt::format("{} installed in {}", names, python.path)};
  }
  suite.pythonpath.push_back(root / "src");
  return Inferred{
      "pythonpath", "src",
      missing ? fmt::format("{} not installed in {}", names, python.path)
              : fmt::format("{}: {} could not say whether it is installed", names, python.path)};
}

// The upstream link template from the git remote.
Inferred upstream(const fs::path& root, const Environment& env, Suite& suite) {
  const std::optional<GitRemote> git = read_git_remote(root, env);
  if (!git) return {"source_url", "none", "not a git checkout (with a commit)"};
  if (git->name.empty()) return {"source_url", "none", "the git checkout has no remote"};
  const std::string url = without_credentials(git->url);
  suite.source_url = source_url_of_remote(git->url);
  if (suite.source_url.empty()) {
    return {
        "source_url", "none",
        fmt::format("git remote {} ({}) is no GitHub, GitLab or Bitbucket URL", git->name, url)};
  }
  return {"source_url", suite.source_url,
          fmt::format("git remote {} ({}), {} at the checkout's commit, now {}", git->name, url,
                      forge_of_remote(git->url), git->commit.substr(0, 12))};
}

// The project folder's name as a suite name: no '/', '\', space or control character.
std::string suite_name(const fs::path& root) {
  std::string name = root.filename().string();
  for (char& c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '/' || c == '\\' || c == ' ') {
      c = '-';
    }
  }
  return name.empty() || name == "." || name == ".." ? "project" : name;
}

}  // namespace

ProjectRoot find_project_root(const fs::path& path) {
  std::error_code ec;
  const fs::path given = normal_absolute(path);
  const fs::path start = fs::is_directory(given, ec) ? given : given.parent_path();
  for (fs::path dir = start;; dir = dir.parent_path()) {
    for (const char* marker : kMarkers) {
      if (fs::exists(dir / marker, ec)) return {dir, marker};
    }
    if (dir == dir.root_path() || !dir.has_parent_path()) break;
  }
  return {start, ""};
}

InferredSuite infer_suite(const fs::path& path, const std::string& python, const Environment& env) {
  std::error_code ec;
  const fs::path given = normal_absolute(path);
  if (!fs::exists(given, ec)) {
    throw UsageError(fmt::format("{}: no such file or folder", path.string()));
  }
  const ProjectRoot found = find_project_root(given);
  const fs::path& root = found.root;
  InferredSuite out;
  Suite& s = out.suite;
  s.project_root = root;
  out.facts.push_back({"project_root", root.string(),
                       found.marker.empty()
                           ? "no pyproject.toml, setup.py, setup.cfg, pytest.ini, tox.ini or .git "
                             "at or above it: the folder given"
                           : fmt::format("the nearest folder holding {}", found.marker)});

  const std::optional<PytestConfig> config = read_pytest_config(root);
  TestsFolder tests = project_tests(root, config);
  // A folder given outside the project's tests folder is the tests folder; a file there, its own.
  if (given != root && !relative_inside(given, tests.dir)) {
    tests = fs::is_directory(given, ec) ? TestsFolder{given, {}, "the folder given"}
                                        : TestsFolder{given.parent_path(), {}, "the file's folder"};
  }
  s.tests_dir = *relative_inside(tests.dir, root);
  s.targets = tests.targets;
  s.file = tests.dir;
  out.facts.push_back({"tests_dir", s.tests_dir, tests.from});
  if (!s.targets.empty()) {
    out.facts.push_back({"targets", fmt::format("{}", fmt::join(s.targets, ", ")), tests.from});
  }

  Suite probe = s;
  probe.norecursedirs = config && !config->norecursedirs.empty() ? config->norecursedirs
                                                                 : pytest_default_norecursedirs();
  const auto [framework, framework_from] = choose_framework(root, probe, config);
  s.framework = framework;
  out.facts.push_back({"framework", framework_name(framework), framework_from});
  if (framework == Framework::kPytest) {
    const bool own = config && !config->python_files.empty();
    s.patterns = own ? config->python_files : pytest_default_python_files();
    out.facts.push_back({"pattern", s.patterns_text(),
                         own ? fmt::format("python_files of {}", config->where())
                             : std::string("pytest's default python_files")});
    s.norecursedirs = probe.norecursedirs;
    out.norecursedirs_configured = config && !config->norecursedirs.empty();
    if (out.norecursedirs_configured) {
      out.facts.push_back({"norecursedirs", fmt::format("{}", fmt::join(s.norecursedirs, " ")),
                           fmt::format("norecursedirs of {}", config->where())});
    }
  } else {
    s.patterns = {"test*.py"};
    out.facts.push_back({"pattern", s.patterns_text(), "unittest discover's default pattern"});
  }

  const Interpreter interpreter = choose_python(python, root, env);
  s.python = interpreter.path;
  s.python_origin = "the interpreter inferred: " + interpreter.from;
  out.python_written = interpreter.written;
  out.facts.push_back({"python", interpreter.path, interpreter.from});
  if (auto src = src_layout(root, interpreter, env, s)) out.facts.push_back(*src);

  s.name = suite_name(root);
  out.facts.insert(out.facts.begin(), {"name", s.name, "the project folder's name"});
  out.facts.push_back(upstream(root, env, s));
  return out;
}

std::string inferred_suite_json(const InferredSuite& inferred) {
  const Suite& s = inferred.suite;
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["project_root"] = ".";
  j["tests_dir"] = s.tests_dir;
  if (!s.targets.empty()) j["targets"] = s.targets;
  j["framework"] = framework_name(s.framework);
  if (s.patterns.size() == 1) {
    j["pattern"] = s.patterns.front();
  } else {
    j["pattern"] = s.patterns;
  }
  if (inferred.norecursedirs_configured) j["norecursedirs"] = s.norecursedirs;
  j["python"] = inferred.python_written;
  if (!s.pythonpath.empty()) {
    std::vector<std::string> entries;
    for (const fs::path& p : s.pythonpath) {
      entries.push_back(relative_inside(p, s.project_root).value_or(p.string()));
    }
    j["pythonpath"] = entries;
  }
  if (!s.source_url.empty()) j["source_url"] = s.source_url;
  return j.dump(2) + "\n";
}

}  // namespace devshim
