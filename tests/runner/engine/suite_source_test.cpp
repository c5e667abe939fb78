#include "runner/engine/suite_source.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "runner/cli/process_environment.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using Strings = std::vector<std::string>;
using testing::write_file;
namespace fs = std::filesystem;

// A project with a setup.py and a tests folder whose files use pytest.
class SuiteSource : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(root_ / "setup.py", "");
    write_file(root_ / "tests/test_a.py", "import pytest\n");
    write_file(root_ / "tests/unit/test_b.py", "");
  }
  OpenedSuite open(const fs::path& path) {
    return open_suite(path, SUITE_PYTHON, runner_environment());
  }
  std::string error_of(const fs::path& path) {
    try {
      open(path);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "no error";
  }
  testing::TempDir dir_;
  const fs::path root_ = dir_ / "proj";
};

TEST_F(SuiteSource, ASuiteFileLoadsAsAlways) {
  write_file(dir_ / "s/suite.json", R"({"name": "s", "project_root": "../proj"})");
  for (const fs::path& p : {dir_ / "s", dir_ / "s/suite.json"}) {
    const OpenedSuite o = open(p);
    EXPECT_EQ(o.suite.name, "s");
    EXPECT_FALSE(o.inferred);
    EXPECT_FALSE(o.kept);
    EXPECT_TRUE(o.targets.empty());
  }
  EXPECT_NE(error_of(dir_ / "nope.json").find("no such suite file"), std::string::npos);
}

TEST_F(SuiteSource, WhatPathSelectsInTheTestsFolder) {
  EXPECT_TRUE(open(root_).targets.empty());
  EXPECT_TRUE(open(root_ / "tests").targets.empty());
  EXPECT_EQ(open(root_ / "tests/unit").targets, Strings{"unit"});
  EXPECT_EQ(open(root_ / "tests/unit/test_b.py").targets, Strings{"unit/test_b.py"});
  EXPECT_EQ(open(root_.string() + "/tests/test_a.py::TestC::test_x[a-1]").targets,
            Strings{"test_a.py::TestC::test_x[a-1]"});
  const OpenedSuite o = open(root_ / "tests/unit");
  ASSERT_TRUE(o.inferred);
  EXPECT_EQ(o.suite.tests_dir, "tests") << "the project's tests folder, whatever PATH names in it";
  EXPECT_EQ(o.kept_file, root_ / kKeptSuiteFile);
}

TEST_F(SuiteSource, TheProjectsKeptSuiteFileIsReadWhenThere) {
  write_file(root_ / kKeptSuiteFile,
             R"({"name": "kept", "tests_dir": "tests/unit", "framework": "unittest"})");
  OpenedSuite o = open(root_ / "tests/unit/test_b.py");
  EXPECT_TRUE(o.kept);
  EXPECT_FALSE(o.inferred);
  EXPECT_EQ(o.suite.name, "kept");
  EXPECT_EQ(o.targets, Strings{"test_b.py"});
  EXPECT_NE(error_of(root_ / "tests/test_a.py").find("lies outside the tests folder"),
            std::string::npos);
  o = open_suite(root_ / "tests", SUITE_PYTHON, runner_environment(), KeptSuiteFile::kIgnore);
  EXPECT_TRUE(o.inferred) << "runner init infers whatever is kept";
}

TEST_F(SuiteSource, WhatDoesNotExistOrHoldsNoTestIsSaid) {
  EXPECT_NE(error_of(root_ / "nowhere").find("nowhere: no such file or folder"), std::string::npos);
  EXPECT_NE(error_of(root_.string() + "/tests::test_x").find("no such file or folder"),
            std::string::npos)
      << "FILE::TEST names a file";
  fs::create_directories(dir_ / "empty/.git");
  write_file(dir_ / "empty/notes.py", "");
  EXPECT_EQ(error_of(dir_ / "empty"),
            "no test files: looked for test*.py in " + (dir_ / "empty").string() +
                " (the project root (no testpaths, tests/ or test/ folder)) and the folders "
                "below it; name the folder or file that holds the tests, e.g. `runner "
                "path/to/tests`");
}

}  // namespace
}  // namespace devshim
