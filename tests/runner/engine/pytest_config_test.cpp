#include "runner/engine/pytest_config.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace devshim {
namespace {

using Strings = std::vector<std::string>;
using testing::TempDir;
using testing::write_file;

TEST(PytestConfig, EachFileWithItsSection) {
  TempDir dir;
  EXPECT_FALSE(read_pytest_config(dir.path())) << "no file";

  write_file(dir / "setup.cfg", "[metadata]\nname = x\n");
  EXPECT_FALSE(read_pytest_config(dir.path())) << "setup.cfg without [tool:pytest]";
  write_file(dir / "setup.cfg", "[tool:pytest]\ntestpaths = t1 t2\npython_files = check_*.py\n");
  auto c = read_pytest_config(dir.path());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->where(), "setup.cfg [tool:pytest]");
  EXPECT_EQ(c->testpaths, (Strings{"t1", "t2"}));
  EXPECT_EQ(c->python_files, (Strings{"check_*.py"}));

  write_file(dir / "tox.ini", "[tox]\nenvlist = py311\n[pytest]\nnorecursedirs = legacy\n");
  c = read_pytest_config(dir.path());
  EXPECT_EQ(c->where(), "tox.ini [pytest]") << "tox.ini before setup.cfg";
  EXPECT_EQ(c->norecursedirs, (Strings{"legacy"}));
  EXPECT_TRUE(c->testpaths.empty());

  write_file(dir / "pyproject.toml", "[project]\nname = 'x'\n");
  EXPECT_EQ(read_pytest_config(dir.path())->where(), "tox.ini [pytest]")
      << "a pyproject.toml without pytest's table is passed over";
  write_file(dir / "pyproject.toml",
             "[tool.pytest.ini_options]\ntestpaths = ['tests']\npythonpath = 'src lib'\n");
  c = read_pytest_config(dir.path());
  EXPECT_EQ(c->where(), "pyproject.toml [tool.pytest.ini_options]");
  EXPECT_EQ(c->testpaths, (Strings{"tests"}));
  EXPECT_EQ(c->pythonpath, (Strings{"src", "lib"})) << "a string is split as an INI value";

  write_file(dir / "pytest.ini", "# nothing but a comment\n");
  c = read_pytest_config(dir.path());
  EXPECT_EQ(c->file, dir / "pytest.ini") << "pytest.ini is pytest's whatever it holds";
  EXPECT_TRUE(c->testpaths.empty());
}

TEST(PytestConfig, Pytest9sOwnTable) {
  TempDir dir;
  write_file(dir / "pyproject.toml", "[tool.pytest]\ntestpaths = [\"spec\"]\n");
  const auto c = read_pytest_config(dir.path());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->where(), "pyproject.toml [tool.pytest]");
  EXPECT_EQ(c->testpaths, (Strings{"spec"}));
}

TEST(PytestConfig, DefaultsArePytests) {
  EXPECT_EQ(pytest_default_python_files(), (Strings{"test_*.py", "*_test.py"}));
  EXPECT_EQ(pytest_default_norecursedirs().size(), 9U);
}

}  // namespace
}  // namespace devshim
