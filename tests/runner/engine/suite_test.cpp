#include "runner/engine/suite.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/error.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;

class SuiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "project/tests");
    fs::create_directories(dir_ / "suite");
  }
  fs::path suite_file() const { return dir_ / "suite/suite.json"; }
  std::string load_error(const std::string& text) {
    write_file(suite_file(), text);
    try {
      load_suite(dir_ / "suite", {});
    } catch (const UsageError& e) {
      return e.what();
    }
    return "no error";
  }
  TempDir dir_;
};

TEST_F(SuiteTest, LoadsEveryKeyAndResolvesPaths) {
  write_file(suite_file(), R"({
  "_comment": "ignored",
  "name": "demo",
  "project_root": "../project",
  "tests_dir": "tests",
  "pattern": "check_*.py",
  "framework": "pytest",
  "python": "../venv/bin/python",
  "pythonpath": ["src", "/abs/lib"],
  "env": {"HF_HUB_OFFLINE": "1"},
  "args": ["-p", "no:randomly"],
  "timeout_s": 12.5,
  "source_url": "https://example.org/blob/{commit}/{path}#L{line}"
})");
  Suite s = load_suite(dir_ / "suite", {});
  EXPECT_EQ(s.name, "demo");
  EXPECT_EQ(s.file, suite_file());
  EXPECT_EQ(s.project_root, dir_ / "project");
  EXPECT_EQ(s.tests_root(), dir_ / "project/tests");
  EXPECT_EQ(s.patterns, std::vector<std::string>{"check_*.py"});
  EXPECT_EQ(s.framework, Framework::kPytest);
  EXPECT_EQ(s.python, (dir_ / "venv/bin/python").string());
  ASSERT_EQ(s.pythonpath.size(), 2U);
  EXPECT_EQ(s.pythonpath[0], dir_ / "project/src");
  EXPECT_EQ(s.pythonpath[1], fs::path("/abs/lib"));
  EXPECT_EQ(s.env.at("HF_HUB_OFFLINE"), "1");
  EXPECT_EQ(s.args, (std::vector<std::string>{"-p", "no:randomly"}));
  EXPECT_DOUBLE_EQ(s.timeout_s, 12.5);
  EXPECT_EQ(s.source_url, "https://example.org/blob/{commit}/{path}#L{line}");
}

TEST_F(SuiteTest, DefaultsApplyAndPathNamesTheFileItself) {
  write_file(suite_file(), R"({"name": "d", "project_root": "../project"})");
  Suite s = load_suite(suite_file(), {});
  EXPECT_EQ(s.framework, Framework::kUnittest);
  EXPECT_EQ(s.patterns, std::vector<std::string>{"test_*.py"});
  EXPECT_TRUE(s.targets.empty());
  EXPECT_TRUE(s.norecursedirs.empty()) << "a unittest suite searches every folder but hidden ones";
  EXPECT_EQ(s.python, "python3");
  EXPECT_EQ(s.tests_dir, "tests");
}

TEST_F(SuiteTest, MalformedJsonNamesFileLineAndColumn) {
  std::string e =
      load_error("{\n  \"name\": \"x\",\n  \"tests_dir\": \"tests\"\n  \"pattern\": \"y\"\n}");
  EXPECT_NE(e.find(suite_file().string() + ":4:"), std::string::npos) << e;
  EXPECT_NE(e.find("malformed JSON"), std::string::npos) << e;
}

// A number JSON allows but a double cannot hold is bad input, not an internal error.
TEST_F(SuiteTest, ANumberTooLargeForADoubleIsMalformedJson) {
  std::string e = load_error("{\"name\": \"x\", \"timeout_s\": 1e999}");
  EXPECT_EQ(e, suite_file().string() + ": malformed JSON: number overflow parsing '1e999'");
}

TEST_F(SuiteTest, WrongTypeNamesLineAndKey) {
  std::string e = load_error(
      "{\n  \"name\": \"x\",\n  \"project_root\": \"../project\",\n  \"timeout_s\": \"fast\"\n}");
  EXPECT_NE(e.find(suite_file().string() + ":4: key \"timeout_s\""), std::string::npos) << e;
}

TEST_F(SuiteTest, LocksNameTheirFilesAndABadLockIsNamedAtItsLine) {
  write_file(suite_file(),
             R"({"name": "x", "project_root": "../project",
                 "locks": {"port 29505": ["test_dist/*.py", "test_rpc.py"], "gpu": ["a.py"]}})");
  Suite s = load_suite(dir_ / "suite", {});
  ASSERT_EQ(s.locks.size(), 2U);
  EXPECT_EQ(s.locks.at("port 29505"), (std::vector<std::string>{"test_dist/*.py", "test_rpc.py"}));

  std::string e = load_error(R"({"name": "x", "project_root": "../project",
 "locks": {"port": "test_dist/*.py"}})");
  EXPECT_NE(e.find(":2: key \"locks.port\": expected a non-empty list of file patterns"),
            std::string::npos)
      << e;
  e = load_error(R"({"name": "x", "project_root": "../project", "locks": {"port": []}})");
  EXPECT_NE(e.find("key \"locks.port\": expected a non-empty list"), std::string::npos) << e;
  e = load_error(R"({"name": "x", "project_root": "../project", "locks": ["test_dist/*.py"]})");
  EXPECT_NE(e.find("key \"locks\": expected an object of lock names"), std::string::npos) << e;
}

TEST_F(SuiteTest, NestedValueErrorNamesTheNestedKey) {
  std::string e = load_error(
      "{\n  \"name\": \"x\",\n  \"project_root\": \"../project\",\n  \"env\": {\n    \"A\": "
      "\"1\",\n"
      "    \"B\": 2\n  }\n}");
  EXPECT_NE(e.find(":6: key \"env.B\": expected a string, got number"), std::string::npos) << e;
  e = load_error(
      "{\"name\": \"x\", \"project_root\": \"../project\",\n \"pythonpath\": [\"a\",\n 3]}");
  EXPECT_NE(e.find(":3: key \"pythonpath.1\""), std::string::npos) << e;
}

TEST_F(SuiteTest, KeysWithSlashesAreReportedAtTheirOwnLine) {
  std::string e =
      load_error("{\"name\": \"x\", \"project_root\": \"../project\",\n\"env\": {\n\"a/b\": 1}}");
  EXPECT_NE(e.find(":3: key \"env.a/b\""), std::string::npos) << e;
}

TEST_F(SuiteTest, UnknownKeySuggestsTheClosestKnownOne) {
  std::string e =
      load_error("{\"name\": \"x\", \"project_root\": \"../project\",\n\"timout_s\": 3}");
  EXPECT_NE(e.find(":2: key \"timout_s\": unknown key; did you mean \"timeout_s\"?"),
            std::string::npos)
      << e;
}

TEST_F(SuiteTest, MissingNameAndUnknownFrameworkAreErrors) {
  EXPECT_NE(load_error("{\"project_root\": \"../project\"}").find("missing required key \"name\""),
            std::string::npos);
  std::string e =
      load_error("{\"name\": \"x\", \"project_root\": \"../project\", \"framework\": \"nose\"}");
  EXPECT_NE(e.find("unknown framework \"nose\""), std::string::npos) << e;
}

TEST_F(SuiteTest, ATestsFolderOutsideTheProjectRootIsRefused) {
  // "../.." would run the files of whatever lies above the project.
  fs::create_directories(dir_ / "elsewhere");
  const std::string e = load_error(
      "{\"name\": \"x\", \"project_root\": \"../project\",\n \"tests_dir\": \"../elsewhere\"}");
  EXPECT_NE(e.find("suite.json:2: key \"tests_dir\""), std::string::npos) << e;
  EXPECT_NE(e.find("outside the project root"), std::string::npos) << e;
  EXPECT_NE(
      load_error("{\"name\": \"x\", \"project_root\": \"../project\", \"tests_dir\": \"/tmp\"}")
          .find("outside the project root"),
      std::string::npos);
  EXPECT_EQ(load_error("{\"name\": \"x\", \"project_root\": \"../project\", "
                       "\"tests_dir\": \"tests/../tests\"}"),
            "no error");
}

TEST_F(SuiteTest, ANameThatIsAPathOrHoldsControlsIsRefused) {
  for (const char* name : {"..", ".", "a/b", "red\\u001b[31m"}) {
    const std::string e =
        load_error(std::string("{\"name\": \"") + name + "\", \"project_root\": \"../project\"}");
    EXPECT_NE(e.find("key \"name\""), std::string::npos) << name << ": " << e;
  }
}

TEST_F(SuiteTest, AKeyGivenTwiceIsRefusedAtItsSecondLine) {
  const std::string e = load_error(
      "{\"name\": \"x\",\n \"project_root\": \"../project\",\n \"timeout_s\": 5,\n \"timeout_s\": "
      "500}");
  EXPECT_NE(e.find("suite.json:4: key \"timeout_s\": given twice (first at line 3)"),
            std::string::npos)
      << e;
}

TEST_F(SuiteTest, ASourceUrlMustBeAWebUrl) {
  const std::string e = load_error(
      "{\"name\": \"x\", \"project_root\": \"../project\",\n"
      " \"source_url\": \"javascript:alert(1)//{path}\"}");
  EXPECT_NE(e.find("suite.json:2: key \"source_url\": expected an http:// or https:// URL"),
            std::string::npos)
      << e;
  EXPECT_EQ(load_error("{\"name\": \"x\", \"project_root\": \"../project\", "
                       "\"source_url\": \"HTTPS://example.org/{path}#L{line}\"}"),
            "no error");
}

TEST_F(SuiteTest, ProjectRootEnvironmentVariableOverridesTheFile) {
  write_file(
      suite_file(),
      R"({"name": "x", "project_root": "../nowhere", "project_root_env": "DEVSHIM_T_ROOT"})");
  EXPECT_EQ(
      load_suite(dir_ / "suite", {{"DEVSHIM_T_ROOT", (dir_ / "project").string()}}).project_root,
      dir_ / "project");
  std::string e = load_error(
      R"({"name": "x", "project_root": "../nowhere", "project_root_env": "DEVSHIM_T_ROOT"})");
  EXPECT_NE(e.find("project root"), std::string::npos) << e;
  EXPECT_NE(e.find("set DEVSHIM_T_ROOT"), std::string::npos) << e;
}

TEST_F(SuiteTest, MissingSuiteFileAndMissingTestsFolderAreUsageErrors) {
  EXPECT_THROW(load_suite(dir_ / "nope", {}), UsageError);
  std::string e = load_error(R"({"name": "x", "project_root": "../project", "tests_dir": "t2"})");
  EXPECT_NE(e.find("tests folder"), std::string::npos) << e;
}

TEST_F(SuiteTest, PatternsTargetsAndNorecursedirsAreListsAsPytestHasThem) {
  write_file(suite_file(), R"({"name": "p", "project_root": "../project", "framework": "pytest",
                               "pattern": ["test_*.py", "*_test.py"],
                               "targets": ["unit", "integration/test_x.py"]})");
  Suite s = load_suite(suite_file(), {});
  EXPECT_EQ(s.patterns, (std::vector<std::string>{"test_*.py", "*_test.py"}));
  EXPECT_EQ(s.patterns_text(), "test_*.py or *_test.py");
  EXPECT_EQ(s.targets, (std::vector<std::string>{"unit", "integration/test_x.py"}));
  EXPECT_NE(std::find(s.norecursedirs.begin(), s.norecursedirs.end(), "build"),
            s.norecursedirs.end())
      << "a pytest suite leaves out the folders pytest does by default";
  EXPECT_EQ(s.python_from(), "\"python\" of " + suite_file().string());

  write_file(suite_file(), R"({"name": "p", "project_root": "../project", "framework": "pytest",
                               "norecursedirs": ["legacy"]})");
  EXPECT_EQ(load_suite(suite_file(), {}).norecursedirs, std::vector<std::string>{"legacy"});

  EXPECT_NE(load_error(R"({"name": "p", "project_root": "../project", "pattern": []})")
                .find("key \"pattern\": expected a file name pattern or a non-empty list"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"name": "p", "project_root": "../project", "pattern": ["a", ""]})")
                .find("key \"pattern.1\": an empty pattern"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"name": "p", "project_root": "../project", "targets": "unit"})")
                .find("key \"targets\": expected a list of strings"),
            std::string::npos);
}

TEST_F(SuiteTest, GtestSuitesNeedNoPythonAndMayBeSharded) {
  write_file(suite_file(), R"({"name": "g", "project_root": "../project", "framework": "gtest",
                               "gtest_shards": 4})");
  Suite s = load_suite(suite_file(), {});
  EXPECT_EQ(s.framework, Framework::kGtest);
  EXPECT_EQ(std::string(framework_name(s.framework)), "gtest");
  EXPECT_EQ(s.patterns, std::vector<std::string>{"*_test"})
      << "the default pattern names test binaries";
  EXPECT_EQ(s.gtest_shards, 4);

  write_file(suite_file(), R"({"name": "g", "project_root": "../project", "framework": "gtest",
                               "pattern": "test_*"})");
  EXPECT_EQ(load_suite(suite_file(), {}).patterns, std::vector<std::string>{"test_*"});
  EXPECT_EQ(load_suite(suite_file(), {}).gtest_shards, 1);
}

TEST_F(SuiteTest, GtestShardsMustBeAWholeNumberAndOnlyForGtest) {
  for (const char* bad : {"0", "-1", "2.5", "\"2\"", "100000"}) {
    std::string e =
        load_error(std::string(R"({"name": "g", "project_root": "../project", "framework": "gtest",
"gtest_shards": )") +
                   bad + "}");
    EXPECT_NE(e.find(":2: key \"gtest_shards\": expected a whole number of shards"),
              std::string::npos)
        << bad << ": " << e;
  }
  std::string e = load_error(R"({"name": "g", "project_root": "../project", "gtest_shards": 2})");
  EXPECT_NE(e.find("key \"gtest_shards\": only for \"framework\": \"gtest\""), std::string::npos)
      << e;
  e = load_error(R"({"name": "g", "project_root": "../project", "framework": "catch2"})");
  EXPECT_NE(e.find("(unittest, pytest, gtest)"), std::string::npos) << e;
}

// Every suite file shipped under suites/ loads: a key misspelt or of the wrong type there is a
// UsageError for whoever runs it at night. A suite whose project lives outside this repository
// (project_root_env) is pointed at an empty project with its tests folder; one that lives inside
// (cuda-idioms) loads as it is.
TEST_F(SuiteTest, EveryBundledSuiteFileLoads) {
  const fs::path suites = fs::path(DEVSHIM_SOURCE_DIR) / "suites";
  int loaded = 0;
  for (const auto& entry : fs::directory_iterator(suites)) {
    const fs::path file = entry.path() / "suite.json";
    if (!fs::exists(file)) continue;
    SCOPED_TRACE(file.string());
    const auto json = nlohmann::json::parse(read_file(file));
    const std::string env = json.value("project_root_env", "");
    const fs::path project = dir_ / entry.path().filename();
    Environment variables;
    if (!env.empty()) {
      fs::create_directories(project / json.value("tests_dir", "tests"));
      variables[env] = project.string();
    }
    try {
      const Suite suite = load_suite(entry.path(), variables);
      EXPECT_EQ(suite.name, entry.path().filename().string());
      if (!env.empty()) {
        EXPECT_EQ(suite.project_root, project);
      }
      ++loaded;
    } catch (const UsageError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(loaded, 8);
}

}  // namespace
}  // namespace devshim
