#include "runner/engine/project_inference.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "runner/cli/process_environment.h"
#include "runner/engine/launch_plan.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using Strings = std::vector<std::string>;
using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;

class ProjectInference : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_ / "proj";
    fs::create_directories(root_);
  }
  // The runner's PATH, and no activated environment unless a test sets one.
  Environment env() const {
    Environment e = runner_environment();
    e.erase("VIRTUAL_ENV");
    e.erase("CONDA_PREFIX");
    e.erase("PYTHONPATH");
    return e;
  }
  InferredSuite infer(const fs::path& path, const std::string& python = SUITE_PYTHON) {
    return infer_suite(path, python, env());
  }
  static std::string fact(const InferredSuite& s, const std::string& key) {
    for (const Inferred& f : s.facts) {
      if (f.key == key) return f.value + " (" + f.from + ")";
    }
    return "(none)";
  }
  void git(const Strings& args) {
    Strings argv{"git", "-C", root_.string(), "-c", "user.name=t", "-c", "user.email=t@e.org"};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_EQ(testing::run(argv).exit_code, 0);
  }
  TempDir dir_;
  fs::path root_;
};

TEST_F(ProjectInference, TheRootIsTheNearestFolderWithAProjectFile) {
  fs::create_directories(root_ / "tests/unit");
  EXPECT_EQ(find_project_root(root_ / "tests/unit").marker, "") << "none: the folder given";
  EXPECT_EQ(find_project_root(root_ / "tests/unit").root, root_ / "tests/unit");
  fs::create_directories(root_ / ".git");
  EXPECT_EQ(find_project_root(root_ / "tests/unit").root, root_);
  write_file(root_ / "setup.py", "");
  EXPECT_EQ(find_project_root(root_ / "tests/unit").marker, "setup.py") << "named in order";
  write_file(root_ / "tests/pytest.ini", "[pytest]\n");
  write_file(root_ / "tests/unit/test_a.py", "");
  EXPECT_EQ(find_project_root(root_ / "tests/unit/test_a.py").root, root_ / "tests");
}

TEST_F(ProjectInference, APytestProjectConfiguredInPyprojectToml) {
  write_file(root_ / "pyproject.toml",
             "[tool.pytest.ini_options]\ntestpaths = [\"spec\"]\n"
             "python_files = [\"check_*.py\"]\nnorecursedirs = [\"fixtures\"]\n");
  write_file(root_ / "spec/check_a.py", "def test_a():\n    pass\n");
  write_file(root_ / "spec/fixtures/check_data.py", "");
  write_file(root_ / "tests/test_other.py", "");
  const InferredSuite s = infer(root_);
  EXPECT_EQ(s.suite.name, "proj");
  EXPECT_EQ(s.suite.project_root, root_);
  EXPECT_EQ(s.suite.tests_dir, "spec");
  EXPECT_EQ(fact(s, "tests_dir"), "spec (testpaths of pyproject.toml [tool.pytest.ini_options])");
  EXPECT_EQ(s.suite.framework, Framework::kPytest);
  EXPECT_EQ(fact(s, "framework"), "pytest (pyproject.toml [tool.pytest.ini_options])");
  EXPECT_EQ(s.suite.patterns, Strings{"check_*.py"});
  EXPECT_EQ(s.suite.norecursedirs, Strings{"fixtures"});
  EXPECT_TRUE(s.norecursedirs_configured);
  EXPECT_EQ(s.suite.file, root_ / "spec") << "what a rerun names to infer it again";
  EXPECT_EQ(fact(s, "project_root"),
            root_.string() + " (the nearest folder holding pyproject.toml)");
}

TEST_F(ProjectInference, SeveralTestpathsAreTheTargetsOfTheirCommonFolder) {
  write_file(root_ / "tox.ini", "[pytest]\ntestpaths = tests/unit tests/integ* docs\n");
  write_file(root_ / "tests/unit/test_a.py", "");
  write_file(root_ / "tests/integration/test_b.py", "");
  write_file(root_ / "tests/slow/test_c.py", "");
  const InferredSuite s = infer(root_);
  EXPECT_EQ(s.suite.tests_dir, "tests") << "docs does not exist";
  EXPECT_EQ(s.suite.targets, (Strings{"unit", "integration"}));
  EXPECT_EQ(fact(s, "targets"), "unit, integration (testpaths of tox.ini [pytest])");
  EXPECT_EQ(s.suite.patterns, (Strings{"test_*.py", "*_test.py"})) << "pytest's default";
  EXPECT_FALSE(s.norecursedirs_configured);
}

TEST_F(ProjectInference, TestsOrTestFolderAndTheFrameworkTheTestsUse) {
  write_file(root_ / "setup.py", "");
  write_file(root_ / "test/test_rot.py", "import unittest\n");
  write_file(root_ / "test/utils.py", "import pytest\n");
  InferredSuite s = infer(root_);
  EXPECT_EQ(fact(s, "tests_dir"), "test (the root's test/ folder)");
  EXPECT_EQ(s.suite.framework, Framework::kUnittest) << "a helper's import is not a test's";
  EXPECT_EQ(s.suite.patterns, Strings{"test*.py"}) << "unittest discover's default";
  EXPECT_TRUE(s.suite.norecursedirs.empty());

  write_file(root_ / "test/sub/helper_test.py", "from pytest import raises\n");
  s = infer(root_ / "test");
  EXPECT_EQ(fact(s, "framework"), "pytest (test/sub/helper_test.py imports pytest)");
  write_file(root_ / "tests/conftest.py", "");
  write_file(root_ / "tests/test_x.py", "");
  s = infer(root_);
  EXPECT_EQ(s.suite.tests_dir, "tests") << "tests/ before test/";
  EXPECT_EQ(fact(s, "framework"), "pytest (tests/conftest.py)");
}

TEST_F(ProjectInference, AFolderOrFileOutsideTheTestsFolderIsItsOwn) {
  write_file(root_ / "setup.cfg", "[metadata]\nname = p\n");
  write_file(root_ / "tests/test_a.py", "");
  write_file(root_ / "benchmarks/test_speed.py", "");
  write_file(root_ / "test_flat.py", "");
  EXPECT_EQ(infer(root_ / "tests/test_a.py").suite.tests_dir, "tests");
  InferredSuite s = infer(root_ / "benchmarks");
  EXPECT_EQ(fact(s, "tests_dir"), "benchmarks (the folder given)");
  s = infer(root_ / "test_flat.py");
  EXPECT_EQ(fact(s, "tests_dir"), ". (the file's folder)");
  fs::remove_all(root_ / "tests");
  EXPECT_EQ(fact(infer(root_), "tests_dir"),
            ". (the project root (no testpaths, tests/ or test/ folder))");
}

TEST_F(ProjectInference, TheInterpreterActivatedFirstThenTheProjectsVenvThenPath) {
  write_file(root_ / "setup.py", "");
  write_file(root_ / "tests/test_a.py", "");
  const auto python_of = [&](const Environment& e, const std::string& given = "") {
    const InferredSuite s = infer_suite(root_, given, e);
    return s.suite.python + " (" + s.python_written + "; " + fact(s, "python") + ")";
  };
  const auto fake_python = [](const fs::path& p) {
    write_file(p, "#!/bin/sh\nexec " SUITE_PYTHON " \"$@\"\n");
    fs::permissions(p, fs::perms::owner_all);
  };
  Environment e = env();
  const std::string path_python = find_executable("python3", e);
  EXPECT_EQ(python_of(e), path_python + " (python3; " + path_python + " (python3 in PATH))");
  fake_python(root_ / ".venv/bin/python");
  EXPECT_EQ(python_of(e), (root_ / ".venv/bin/python").string() + " (.venv/bin/python; " +
                              (root_ / ".venv/bin/python").string() + " (the project's .venv))");
  fake_python(dir_ / "conda/bin/python");
  e["CONDA_PREFIX"] = (dir_ / "conda").string();
  EXPECT_EQ(python_of(e), (dir_ / "conda/bin/python").string() + " (" +
                              (dir_ / "conda/bin/python").string() + "; " +
                              (dir_ / "conda/bin/python").string() +
                              " ($CONDA_PREFIX, the activated conda environment))");
  fake_python(dir_ / "venv/bin/python");
  e["VIRTUAL_ENV"] = (dir_ / "venv").string() + "/";
  EXPECT_NE(python_of(e).find("($VIRTUAL_ENV, the activated virtual environment)"),
            std::string::npos)
      << python_of(e);
  EXPECT_EQ(infer_suite(root_, "", e).suite.python, (dir_ / "venv/bin/python").string());
  EXPECT_EQ(infer_suite(root_, SUITE_PYTHON, e).suite.python, SUITE_PYTHON) << "--python wins";
  e["VIRTUAL_ENV"] = (dir_ / "gone").string();
  EXPECT_EQ(infer_suite(root_, "", e).suite.python, (dir_ / "conda/bin/python").string())
      << "an environment without its interpreter is passed over";
}

TEST_F(ProjectInference, ASrcLayoutGoesOnThePathWhenItsPackageIsNotInstalled) {
  write_file(root_ / "pyproject.toml", "[project]\nname = 'pkg'\n");
  write_file(root_ / "src/pkg/__init__.py", "");
  write_file(root_ / "src/README.md", "");
  write_file(root_ / "tests/test_a.py", "");
  InferredSuite s = infer(root_);
  EXPECT_EQ(s.suite.pythonpath, std::vector<fs::path>{root_ / "src"});
  EXPECT_EQ(fact(s, "pythonpath"),
            std::string("src (src/pkg not installed in ") + SUITE_PYTHON + ")");
  // Installed (here: on the interpreter's path some other way), the tests import it from there.
  Environment e = env();
  e["PYTHONPATH"] = (root_ / "src").string();
  s = infer_suite(root_, SUITE_PYTHON, e);
  EXPECT_TRUE(s.suite.pythonpath.empty());
  EXPECT_EQ(fact(s, "pythonpath"), std::string("none (src/pkg installed in ") + SUITE_PYTHON + ")");
  fs::remove_all(root_ / "src/pkg");
  EXPECT_EQ(fact(infer(root_), "pythonpath"), "(none)") << "a src/ without Python";
}

TEST_F(ProjectInference, TheUpstreamLinkFromTheGitRemote) {
  write_file(root_ / "tests/test_a.py", "");
  EXPECT_EQ(fact(infer(root_), "source_url"), "none (not a git checkout (with a commit))");
  git({"init", "-q"});
  git({"add", "."});
  git({"commit", "-q", "-m", "first"});
  EXPECT_EQ(fact(infer(root_), "source_url"), "none (the git checkout has no remote)");
  git({"remote", "add", "origin", "https://user:pw@example.org/o/r.git"});
  EXPECT_EQ(fact(infer(root_), "source_url"),
            "none (git remote origin (https://example.org/o/r.git) is no GitHub, GitLab or "
            "Bitbucket URL)");
  git({"remote", "set-url", "origin", "git@gitlab.com:g/proj.git"});
  const InferredSuite s = infer(root_);
  EXPECT_EQ(s.suite.source_url, "https://gitlab.com/g/proj/-/blob/{commit}/{path}#L{line}");
  EXPECT_NE(fact(s, "source_url")
                .find("git remote origin (git@gitlab.com:g/proj.git), GitLab at "
                      "the checkout's commit, now "),
            std::string::npos)
      << fact(s, "source_url");
}

TEST_F(ProjectInference, TheNameIsTheProjectFoldersAsASuiteNameMayBe) {
  const fs::path odd = dir_ / "my project";
  write_file(odd / "tests/test_a.py", "");
  EXPECT_EQ(infer(odd).suite.name, "my-project");
}

TEST_F(ProjectInference, TheSuiteFileItWritesLoadsAsTheSuiteInferred) {
  write_file(root_ / "setup.cfg",
             "[tool:pytest]\ntestpaths = tests/a tests/b\nnorecursedirs = data\n");
  write_file(root_ / "src/pkg/__init__.py", "");
  write_file(root_ / "tests/a/test_a.py", "");
  write_file(root_ / "tests/b/test_b.py", "");
  git({"init", "-q"});
  git({"add", "."});
  git({"commit", "-q", "-m", "first"});
  git({"remote", "add", "origin", "https://github.com/o/proj"});
  const InferredSuite inferred = infer(root_);
  const std::string text = inferred_suite_json(inferred);
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j.size(), 10U) << text;
  EXPECT_EQ(j["python"], SUITE_PYTHON) << "outside the project: absolute";
  write_file(root_ / kKeptSuiteFile, text);
  const Suite kept = load_suite(root_ / kKeptSuiteFile, env());
  const Suite& s = inferred.suite;
  EXPECT_EQ(kept.name, s.name);
  EXPECT_EQ(kept.project_root, s.project_root);
  EXPECT_EQ(kept.tests_dir, s.tests_dir);
  EXPECT_EQ(kept.targets, (Strings{"a", "b"}));
  EXPECT_EQ(kept.framework, s.framework);
  EXPECT_EQ(kept.patterns, s.patterns);
  EXPECT_EQ(kept.norecursedirs, Strings{"data"});
  EXPECT_EQ(kept.python, s.python);
  EXPECT_EQ(kept.pythonpath, s.pythonpath);
  EXPECT_EQ(kept.source_url, "https://github.com/o/proj/blob/{commit}/{path}#L{line}");
}

}  // namespace
}  // namespace devshim
