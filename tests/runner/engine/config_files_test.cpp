#include "runner/engine/config_files.h"

#include <gtest/gtest.h>

namespace devshim {
namespace {

using Strings = std::vector<std::string>;

TEST(IniSection, ReadsASectionAsPytestsIniconfigDoes) {
  const char* text =
      "[metadata]\n"
      "name = other\n"
      "\n"
      "[tool:pytest]  # pytest's section of setup.cfg\n"
      "; a comment\n"
      "testpaths = tests\n"
      "python_files: check_*.py\n"
      "addopts =\n"
      "    -ra\n"
      "    # not an option\n"
      "    --strict-markers\n"
      "[flake8]\n"
      "testpaths = elsewhere\n";
  const auto section = ini_section(text, "tool:pytest");
  ASSERT_TRUE(section);
  EXPECT_EQ(section->at("testpaths"), "tests");
  EXPECT_EQ(section->at("python_files"), "check_*.py") << "key: value as well as key = value";
  EXPECT_EQ(section->at("addopts"), "-ra\n--strict-markers") << "continuation lines, comments out";
  EXPECT_EQ(section->count("name"), 0U) << "another section's key";
  EXPECT_FALSE(ini_section(text, "pytest")) << "no such section";
  EXPECT_TRUE(ini_section("[pytest]\n", "pytest")->empty()) << "present, if empty";
}

TEST(SplitWords, SplitsAsPytestSplitsItsListOptions) {
  EXPECT_EQ(split_words("test_*.py  *_test.py\ncheck_*.py"),
            (Strings{"test_*.py", "*_test.py", "check_*.py"}));
  EXPECT_EQ(split_words(R"("my tests" 'other dir' plain)"),
            (Strings{"my tests", "other dir", "plain"}));
  EXPECT_TRUE(split_words("  ").empty());
}

TEST(TomlTable, ReadsStringsAndArraysOfStrings) {
  const char* text = R"(
[project]
name = "x"
dependencies = ["torch"]

[tool.pytest.ini_options]
minversion = "7.0"
testpaths = [
  "tests",   # the unit tests
  'integration',
]
python_files = "test_*.py check_*.py"
xfail_strict = true
filterwarnings = ["error", { not = "a string" }]
markers = ["slow: \"marks\" slow tests"]

[ tool . ruff ]
testpaths = ["not pytest's"]
)";
  const auto table = toml_table(text, "tool.pytest.ini_options");
  ASSERT_TRUE(table);
  EXPECT_EQ(table->at("testpaths").items, (Strings{"tests", "integration"}));
  EXPECT_TRUE(table->at("testpaths").array);
  EXPECT_EQ(table->at("python_files").items, (Strings{"test_*.py check_*.py"}));
  EXPECT_FALSE(table->at("python_files").array);
  EXPECT_EQ(table->at("minversion").items, (Strings{"7.0"}));
  EXPECT_EQ(table->count("xfail_strict"), 0U) << "a boolean is no string";
  EXPECT_EQ(table->count("filterwarnings"), 0U) << "an array of more than strings";
  EXPECT_EQ(table->at("markers").items, (Strings{"slow: \"marks\" slow tests"}));
  EXPECT_EQ(toml_table(text, "tool.ruff")->at("testpaths").items, (Strings{"not pytest's"}));
  EXPECT_EQ(toml_table(text, "project")->at("name").items, (Strings{"x"}));
  EXPECT_FALSE(toml_table(text, "tool.pytest")) << "a table's subtable is not the table";
}

TEST(TomlTable, SkipsWhatItDoesNotReadWithoutLosingItsPlace) {
  const char* text = R"(
[tool.other]
doc = """
[tool.pytest.ini_options]
testpaths = ["inside a string"]
"""
inline = { a = "[x]", b = [1, 2] }
dates = 1979-05-27
[[tool.array_of_tables]]
testpaths = ["no"]
[tool.pytest.ini_options]
"testpaths" = ["quoted key"]
)";
  const auto table = toml_table(text, "tool.pytest.ini_options");
  ASSERT_TRUE(table);
  EXPECT_EQ(table->at("testpaths").items, (Strings{"quoted key"}));
  EXPECT_FALSE(toml_table("[project]\nname = 'x'\n", "tool.pytest.ini_options"));
}

}  // namespace
}  // namespace devshim
