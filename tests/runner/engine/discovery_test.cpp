#include "runner/engine/discovery.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;
using testing::write_file;

class DiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* f :
         {"tests/test_b.py", "tests/test_a.py", "tests/helper.py", "tests/pipelines/test_fill.py",
          "tests/pipelines/test_asr.py", "tests/pipelines/__pycache__/test_cached.py",
          "tests/.hidden/test_hidden.py", "tests/models/bert/test_bert.py"}) {
      write_file(dir_ / f, "");
    }
    suite_.name = "t";
    suite_.project_root = dir_.path();
  }
  std::vector<std::string> rel(const std::vector<std::string>& targets) {
    std::vector<std::string> out;
    for (const auto& f : discover_test_files(suite_, targets)) out.push_back(f.rel_path);
    return out;
  }
  TempDir dir_;
  Suite suite_;
};

TEST_F(DiscoveryTest, NoTargetMeansTheWholeTestsFolderSortedAndFiltered) {
  EXPECT_EQ(rel({}),
            (std::vector<std::string>{"models/bert/test_bert.py", "pipelines/test_asr.py",
                                      "pipelines/test_fill.py", "test_a.py", "test_b.py"}));
}

TEST_F(DiscoveryTest, AFileMatchingAnyPatternIsFound) {
  write_file(dir_ / "tests/linalg_test.py", "");
  suite_.patterns = {"test_*.py", "*_test.py"};
  EXPECT_EQ(rel({"."}), (std::vector<std::string>{"linalg_test.py", "models/bert/test_bert.py",
                                                  "pipelines/test_asr.py", "pipelines/test_fill.py",
                                                  "test_a.py", "test_b.py"}));
}

TEST_F(DiscoveryTest, NorecursedirsAndVirtualEnvironmentsAreNotSearched) {
  // A venv or conda environment inside the tests folder holds other projects' test files.
  write_file(dir_ / "tests/env/pyvenv.cfg", "home = /usr/bin\n");
  write_file(dir_ / "tests/env/lib/site-packages/numpy/test_numpy.py", "");
  write_file(dir_ / "tests/conda/conda-meta/history", "");
  write_file(dir_ / "tests/conda/lib/test_conda.py", "");
  write_file(dir_ / "tests/build/lib/test_copy.py", "");
  EXPECT_EQ(rel({}), (std::vector<std::string>{"build/lib/test_copy.py", "models/bert/test_bert.py",
                                               "pipelines/test_asr.py", "pipelines/test_fill.py",
                                               "test_a.py", "test_b.py"}));
  suite_.norecursedirs = {"build", "mod*"};
  EXPECT_EQ(rel({}), (std::vector<std::string>{"pipelines/test_asr.py", "pipelines/test_fill.py",
                                               "test_a.py", "test_b.py"}));
  // A folder named as a target is searched whatever its name.
  EXPECT_EQ(rel({"build"}), (std::vector<std::string>{"build/lib/test_copy.py"}));
}

TEST_F(DiscoveryTest, TheSuitesTargetsAreWhatARunWithoutTargetsTakes) {
  suite_.targets = {"pipelines", "test_b.py"};
  EXPECT_EQ(rel({}), (std::vector<std::string>{"pipelines/test_asr.py", "pipelines/test_fill.py",
                                               "test_b.py"}));
  EXPECT_EQ(rel({"-k=fill"}), (std::vector<std::string>{"pipelines/test_asr.py",
                                                        "pipelines/test_fill.py", "test_b.py"}))
      << "-k selects tests, not files: the suite's targets still apply";
  EXPECT_EQ(rel({"test_a.py"}), (std::vector<std::string>{"test_a.py"}))
      << "targets given replace the suite's";
}

TEST_F(DiscoveryTest, FoldersAndFilesAreDeduplicatedAndSorted) {
  EXPECT_EQ(
      rel({"test_b.py", "pipelines", "pipelines/test_asr.py", "test_b.py"}),
      (std::vector<std::string>{"pipelines/test_asr.py", "pipelines/test_fill.py", "test_b.py"}));
}

TEST_F(DiscoveryTest, LeadingTestsPrefixAndAbsolutePathsAreAccepted) {
  EXPECT_EQ(rel({"tests/pipelines"}), rel({"pipelines"}));
  EXPECT_EQ(rel({(dir_ / "tests/test_a.py").string()}), std::vector<std::string>{"test_a.py"});
  EXPECT_EQ(rel({"tests"}), rel({}));
}

TEST_F(DiscoveryTest, AFileNamedExplicitlyIsTakenWhateverItsName) {
  EXPECT_EQ(rel({"helper.py"}), std::vector<std::string>{"helper.py"});
}

TEST_F(DiscoveryTest, TestTargetsNameTestsOfAFileAndTheFileAloneRunsWhole) {
  const auto files = discover_test_files(
      suite_, {"test_b.py::TestC::test_y[a b]", "tests/test_b.py::test_z", "test_b.py::test_z",
               "test_a.py::test_x", "test_a.py", "-k=cuda and not fp16"});
  ASSERT_EQ(files.size(), 2U);
  EXPECT_EQ(files[0].rel_path, "test_a.py");
  EXPECT_TRUE(files[0].tests.empty()) << "named alone as well: every test";
  EXPECT_EQ(files[1].rel_path, "test_b.py");
  EXPECT_EQ(files[1].tests, (std::vector<std::string>{"TestC::test_y[a b]", "test_z"}));
  for (const auto& f : files) EXPECT_EQ(f.keyword, "cuda and not fp16");
  EXPECT_EQ(rel({"-k=x"}), rel({})) << "a keyword alone keeps every file";
}

TEST_F(DiscoveryTest, ATestTargetNeedsAFile) {
  EXPECT_THROW(rel({"pipelines::test_x"}), UsageError);
  EXPECT_THROW(rel({"test_a.py::"}), UsageError);
  EXPECT_THROW(rel({"::test_x"}), UsageError);
}

TEST_F(DiscoveryTest, UnknownTargetIsAUsageErrorNamingIt) {
  try {
    rel({"pipelines", "no_such_dir"});
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown target \"no_such_dir\""), std::string::npos)
        << e.what();
  }
}

TEST_F(DiscoveryTest, TargetsOutsideTheTestsFolderAreRejected) {
  write_file(dir_ / "elsewhere/test_x.py", "");
  EXPECT_THROW(rel({"../elsewhere/test_x.py"}), UsageError);
  EXPECT_THROW(rel({"/etc"}), UsageError);
}

TEST(MatchesPattern, FollowsFnmatch) {
  EXPECT_TRUE(matches_pattern("test_*.py", "test_x.py"));
  EXPECT_FALSE(matches_pattern("test_*.py", "x_test.py"));
  EXPECT_TRUE(matches_pattern("*_test", "runner_test"));
}

TEST(LocksOf, EachFileHoldsTheLocksItsProcessHolds) {
  Suite s;
  s.locks = {{"port 29505", {"test_dist/*.py"}},
             {"scratch", {"*/test_utils.py", "ops/math_test*"}}};
  const std::vector<TestFile> files{{"test_dist/test_utils.py", "/t/test_dist/test_utils.py"},
                                    {"test_model.py", "/t/test_model.py"},
                                    {"ops/math_test [shard 2 of 2]", "/t/ops/math_test", 1, 2}};
  EXPECT_EQ(locks_of(s, files),
            (std::vector<std::vector<std::string>>{{"port 29505", "scratch"}, {}, {"scratch"}}));
  EXPECT_EQ(locks_of(Suite{}, files), std::vector<std::vector<std::string>>(3))
      << "no locks: one empty entry per file";
}

namespace fs = std::filesystem;

class GtestDiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* f : {"bin/b_test", "bin/a_test", "bin/sub/c_test", "bin/notes_test",
                          "bin/a_test.cpp", "bin/.hidden/h_test", "bin/helper"}) {
      write_file(dir_ / f, "");
      fs::permissions(dir_ / f, fs::perms::owner_all);
    }
    fs::permissions(dir_ / "bin/notes_test", fs::perms::owner_read | fs::perms::owner_write);
    fs::permissions(dir_ / "bin/a_test.cpp", fs::perms::owner_read | fs::perms::owner_write);
    suite_.name = "g";
    suite_.project_root = dir_.path();
    suite_.tests_dir = "bin";
    suite_.framework = Framework::kGtest;
    suite_.patterns = {"*_test"};
  }
  std::vector<std::string> rel(const std::vector<std::string>& targets) {
    std::vector<std::string> out;
    for (const auto& f : discover_test_files(suite_, targets)) out.push_back(f.rel_path);
    return out;
  }
  TempDir dir_;
  Suite suite_;
};

TEST_F(GtestDiscoveryTest, FindsExecutablesMatchingThePattern) {
  EXPECT_EQ(rel({}), (std::vector<std::string>{"a_test", "b_test", "sub/c_test"}));
  EXPECT_EQ(rel({"helper"}), std::vector<std::string>{"helper"}) << "named: any executable";
}

TEST_F(GtestDiscoveryTest, ANamedFileThatIsNotExecutableIsAUsageError) {
  try {
    discover_test_files(suite_, {"notes_test"});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("target \"notes_test\" is not executable"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(GtestDiscoveryTest, ShardsFollowTheirBinaryInOrder) {
  suite_.gtest_shards = 3;
  auto files = discover_test_files(suite_, {"sub", "a_test"});
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.rel_path);
  EXPECT_EQ(names,
            (std::vector<std::string>{"a_test [shard 1 of 3]", "a_test [shard 2 of 3]",
                                      "a_test [shard 3 of 3]", "sub/c_test [shard 1 of 3]",
                                      "sub/c_test [shard 2 of 3]", "sub/c_test [shard 3 of 3]"}));
  EXPECT_EQ(files[4].shard, 1);
  EXPECT_EQ(files[4].shards, 3);
  EXPECT_EQ(files[4].file_rel(), "sub/c_test");
  EXPECT_EQ(files[4].abs_path, dir_ / "bin/sub/c_test");
  suite_.gtest_shards = 1;
  EXPECT_EQ(discover_test_files(suite_, {"a_test"}).at(0).file_rel(), "a_test");
}

}  // namespace
}  // namespace devshim
