#include "runner/engine/launch_plan.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "runner/engine/frameworks/framework_traits.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;
using testing::write_file;

Suite make_suite(Framework f) {
  Suite s;
  s.name = "t";
  s.project_root = "/proj";
  s.tests_dir = "tests";
  s.framework = f;
  s.python = "/venv/bin/python";
  s.pythonpath = {"/proj/src"};
  s.env = {{"HF_HUB_OFFLINE", "1"}, {"HOME", "/suite-home"}};
  return s;
}

LaunchOptions make_options(bool shim) {
  LaunchOptions o;
  o.shim = shim;
  o.shim_dir = "/devshim/shim/python";
  o.logs_dir = "/out/logs";
  return o;
}

TEST(ChildEnvironment, ShimModeActivatesAndPutsTheShimFirstOnPythonpath) {
  Environment inherited{{"PATH", "/usr/bin"}, {"PYTHONPATH", "/mine"}, {"HOME", "/root"}};
  Environment env =
      child_environment(make_suite(Framework::kPytest), make_options(true), inherited);
  EXPECT_EQ(env.at("ACTIVATE_TORCH_DEVICE"), "1");
  EXPECT_EQ(env.at("PYTORCH_ENABLE_MPS_FALLBACK"), "1");
  EXPECT_EQ(env.at("PYTHONPATH"), "/devshim/shim/python:/proj/src:/mine");
  EXPECT_EQ(env.at("PYTHONUNBUFFERED"), "1");
  EXPECT_EQ(env.at("PYTHONFAULTHANDLER"), "1");
  EXPECT_EQ(env.at("PATH"), "/usr/bin");
  EXPECT_EQ(env.at("HF_HUB_OFFLINE"), "1");
  EXPECT_EQ(env.at("HOME"), "/suite-home") << "suite env overrides the inherited one";
}

TEST(ChildEnvironment, BaselineModeLeavesTheShimOut) {
  Environment inherited{{"ACTIVATE_TORCH_DEVICE", "1"}};
  Environment env =
      child_environment(make_suite(Framework::kPytest), make_options(false), inherited);
  EXPECT_EQ(env.count("ACTIVATE_TORCH_DEVICE"), 0U);
  EXPECT_EQ(env.at("PYTHONPATH"), "/proj/src");
}

TEST(ChildEnvironment, ASuitesOwnPythonpathIsKeptBetweenItsPathsAndTheInheritedOne) {
  Suite s = make_suite(Framework::kUnittest);
  s.env["PYTHONPATH"] = "/suite/extra";
  Environment env = child_environment(s, make_options(true), {{"PYTHONPATH", "/mine"}});
  EXPECT_EQ(env.at("PYTHONPATH"), "/devshim/shim/python:/proj/src:/suite/extra:/mine");
}

// Each of -j processes gets its share of the cores as threads, unless the user's environment or
// the suite says how many; without a share (devices, a trial's own options) nothing is set.
TEST(ChildEnvironment, EachProcessGetsItsShareOfTheCoresAsThreads) {
  EXPECT_EQ(threads_per_process(2, 2), 1);
  EXPECT_EQ(threads_per_process(1, 2), 2);
  EXPECT_EQ(threads_per_process(4, 16), 4);
  EXPECT_EQ(threads_per_process(3, 16), 5);
  EXPECT_EQ(threads_per_process(8, 2), 1);
  EXPECT_EQ(threads_per_process(0, 2), 2);

  LaunchOptions o = make_options(true);
  o.threads = 3;
  Suite s = make_suite(Framework::kPytest);
  EXPECT_EQ(child_environment(s, o, {}).at("OMP_NUM_THREADS"), "3");
  EXPECT_EQ(child_environment(s, o, {{"OMP_NUM_THREADS", "8"}}).at("OMP_NUM_THREADS"), "8");
  s.env["OMP_NUM_THREADS"] = "1";
  EXPECT_EQ(child_environment(s, o, {{"OMP_NUM_THREADS", "8"}}).at("OMP_NUM_THREADS"), "1");
  EXPECT_EQ(child_environment(make_suite(Framework::kPytest), make_options(false), {})
                .count("OMP_NUM_THREADS"),
            0U);
}

TEST(TestCommand, UnittestRunsTheFileVerbosely) {
  Suite s = make_suite(Framework::kUnittest);
  TestFile f{"pipelines/test_x.py", "/proj/tests/pipelines/test_x.py"};
  EXPECT_EQ(test_command(s, "/py", f, ""),
            (std::vector<std::string>{"/py", "-m", "unittest", "-v", "tests/pipelines/test_x.py"}));
}

TEST(TestCommand, PytestWritesJunitXmlWithFileAndLine) {
  Suite s = make_suite(Framework::kPytest);
  s.args = {"-p", "no:randomly"};
  TestFile f{"test_x.py", "/proj/tests/test_x.py"};
  EXPECT_EQ(
      test_command(s, "/py", f, "/out/logs/test_x.py.xml"),
      (std::vector<std::string>{"/py", "-m", "pytest", "-v", "-ra",
                                "--junitxml=/out/logs/test_x.py.xml", "-o", "junit_family=xunit1",
                                "-p", "no:cacheprovider", "-p", "no:randomly", "tests/test_x.py"}));
}

TEST(PlanProcess, LogsMirrorTheTestsTreeAndCwdIsTheProjectRoot) {
  Suite s = make_suite(Framework::kPytest);
  LaunchOptions o = make_options(true);
  TestFile f{"models/bert/test_bert.py", "/proj/tests/models/bert/test_bert.py"};
  ProcessSpec p = plan_process(s, o, {}, f);
  EXPECT_EQ(p.cwd, "/proj");
  EXPECT_EQ(p.log_path, "/out/logs/models/bert/test_bert.py.log");
  EXPECT_EQ(p.junit_path, "/out/logs/models/bert/test_bert.py.xml");
  EXPECT_EQ(p.argv.front(), "/venv/bin/python");
}

TEST(PlanProcess, AFileHoldsTheLocksWhosePatternsMatchItsPath) {
  Suite s = make_suite(Framework::kPytest);
  s.locks = {{"port 29505", {"test_dist/*.py"}}, {"scratch", {"*/test_utils.py", "test_io.py"}}};
  LaunchOptions o = make_options(true);
  auto locks = [&](const std::string& rel) {
    return plan_process(s, o, {}, TestFile{rel, "/proj/tests/" + rel}).locks;
  };
  EXPECT_EQ(locks("test_dist/test_utils.py"), (std::vector<std::string>{"port 29505", "scratch"}));
  EXPECT_EQ(locks("test_dist/sub/test_dist.py"), (std::vector<std::string>{"port 29505"}));
  EXPECT_EQ(locks("test_io.py"), (std::vector<std::string>{"scratch"}));
  EXPECT_TRUE(locks("test_model.py").empty());
}

TEST(TestCommand, GtestRunsTheBinaryWithXmlOutputAndTheSuitesArgs) {
  Suite s = make_suite(Framework::kGtest);
  s.args = {"--gtest_brief=0"};
  TestFile f{"ops/math_test", "/proj/tests/ops/math_test"};
  EXPECT_EQ(test_command(s, "", f, "/out/logs/ops/math_test.xml"),
            (std::vector<std::string>{"/proj/tests/ops/math_test",
                                      "--gtest_output=xml:/out/logs/ops/math_test.xml",
                                      "--gtest_brief=0"}));
}

TEST(PlanProcess, GtestNeedsNoPythonAndDropsInheritedShardVariables) {
  Suite s = make_suite(Framework::kGtest);
  s.python = "no-such-python";
  TestFile f{"ops/math_test", "/proj/tests/ops/math_test"};
  ProcessSpec p = plan_process(
      s, make_options(true),
      {{"GTEST_TOTAL_SHARDS", "9"}, {"GTEST_SHARD_INDEX", "3"}, {"ACTIVATE_TORCH_DEVICE", "1"}}, f);
  EXPECT_EQ(p.argv.front(), "/proj/tests/ops/math_test");
  EXPECT_EQ(p.log_path, "/out/logs/ops/math_test.log");
  EXPECT_EQ(p.junit_path, "/out/logs/ops/math_test.xml");
  EXPECT_EQ(p.argv.at(1), "--gtest_output=xml:/out/logs/ops/math_test.xml");
  EXPECT_EQ(p.env.count("GTEST_TOTAL_SHARDS"), 0U);
  EXPECT_EQ(p.env.count("GTEST_SHARD_INDEX"), 0U);
  EXPECT_EQ(p.env.at("ACTIVATE_TORCH_DEVICE"), "1");
  EXPECT_EQ(p.cwd, "/proj");
}

TEST(PlanProcess, AGtestShardRunsWithGoogleTestsShardVariablesAndItsOwnLog) {
  Suite s = make_suite(Framework::kGtest);
  TestFile f{"ops/math_test" + gtest_shard_suffix(1, 4), "/proj/tests/ops/math_test", 1, 4};
  ProcessSpec p = plan_process(s, make_options(true), {}, f);
  EXPECT_EQ(f.rel_path, "ops/math_test [shard 2 of 4]");
  EXPECT_EQ(p.env.at("GTEST_TOTAL_SHARDS"), "4");
  EXPECT_EQ(p.env.at("GTEST_SHARD_INDEX"), "1");
  EXPECT_EQ(p.log_path, "/out/logs/ops/math_test.shard-2-of-4.log");
  EXPECT_EQ(p.junit_path, "/out/logs/ops/math_test.shard-2-of-4.xml");
  EXPECT_EQ(p.argv, (std::vector<std::string>{
                        "/proj/tests/ops/math_test",
                        "--gtest_output=xml:/out/logs/ops/math_test.shard-2-of-4.xml"}));
}

TEST(PlanProcess, TestTargetsAndKeywordsBecomeEachFrameworksSelectors) {
  TestFile f{"sub/test_x.py", "/proj/tests/sub/test_x.py"};
  f.tests = {"TestC::test_y[a b]", "test_z"};
  f.keyword = "cuda";
  ProcessSpec p = plan_process(make_suite(Framework::kPytest), make_options(true), {}, f);
  ASSERT_GE(p.argv.size(), 4U);
  EXPECT_EQ(std::vector<std::string>(p.argv.end() - 4, p.argv.end()),
            (std::vector<std::string>{"-k", "cuda", "tests/sub/test_x.py::TestC::test_y[a b]",
                                      "tests/sub/test_x.py::test_z"}));

  f.tests = {"TestC::test_y", "TestC.test_w", "TestC::test_v (i=1)"};
  p = plan_process(make_suite(Framework::kUnittest), make_options(true), {}, f);
  EXPECT_EQ(
      std::vector<std::string>(p.argv.end() - 5, p.argv.end()),
      (std::vector<std::string>{"-k", "cuda", "tests.sub.test_x.TestC.test_y",
                                "tests.sub.test_x.TestC.test_w", "tests.sub.test_x.TestC.test_v"}));

  TestFile g{"ops/math_test", "/proj/tests/ops/math_test"};
  g.keyword = "Add";
  p = plan_process(make_suite(Framework::kGtest), make_options(true), {}, g);
  EXPECT_EQ(p.argv.back(), "--gtest_filter=*Add*");
  g.tests = {"MathTest.Adds", "Other.*"};
  p = plan_process(make_suite(Framework::kGtest), make_options(true), {}, g);
  EXPECT_EQ(p.argv.back(), "--gtest_filter=MathTest.Adds:Other.*") << "the last filter wins";
}

// A continuation after a crash runs the file without the tests it reported
// (runner/engine/continuation.h): pytest leaves tests out by node id, GoogleTest by negative
// patterns, unittest cannot.
TEST(PlanProcess, PytestLeavesOutTestsByNodeIdAndUnittestCannot) {
  const TestFile f{"sub/test_x.py", "/proj/tests/sub/test_x.py"};
  const std::vector<std::string> reported{"tests/sub/test_x.py::test_a[x y]",
                                          "tests/sub/test_x.py::T::test_b"};
  ProcessSpec p = plan_process(make_suite(Framework::kPytest), make_options(true), {}, f);
  EXPECT_TRUE(framework_traits(Framework::kPytest).deselect(p, reported));
  EXPECT_EQ(
      std::vector<std::string>(p.argv.end() - 5, p.argv.end()),
      (std::vector<std::string>{"--deselect", "tests/sub/test_x.py::test_a[x y]", "--deselect",
                                "tests/sub/test_x.py::T::test_b", "tests/sub/test_x.py"}));
  p = plan_process(make_suite(Framework::kUnittest), make_options(true), {}, f);
  const std::vector<std::string> before = p.argv;
  EXPECT_FALSE(framework_traits(Framework::kUnittest).deselect(p, reported));
  EXPECT_EQ(p.argv, before);
}

// GoogleTest takes its last --gtest_filter: the tests left out join the filter the process would
// have run under as negative patterns.
TEST(PlanProcess, GtestLeavesOutTestsByNegativePatternsOfItsFilter) {
  const FrameworkTraits& gtest = framework_traits(Framework::kGtest);
  TestFile f{"ops/math_test", "/proj/tests/ops/math_test"};
  TestFile named;
  named.tests = {"A.b", "P/C.d/0"};
  const std::vector<std::string> reported =
      gtest.test_selectors(make_suite(Framework::kGtest), named);
  const auto left_out = [&](const TestFile& file, const Environment& env) {
    ProcessSpec p = plan_process(make_suite(Framework::kGtest), make_options(true), env, file);
    const std::size_t before = p.argv.size();
    EXPECT_TRUE(gtest.deselect(p, reported));
    EXPECT_EQ(p.argv.size(), before + 1);
    return p.argv.back();
  };
  EXPECT_EQ(left_out(f, {}), "--gtest_filter=*-A.b:P/C.d/0");
  EXPECT_EQ(left_out(f, {{"GTEST_FILTER", "Math*"}}), "--gtest_filter=Math*-A.b:P/C.d/0");
  f.keyword = "Add";
  EXPECT_EQ(left_out(f, {{"GTEST_FILTER", "Math*"}}), "--gtest_filter=*Add*-A.b:P/C.d/0")
      << "a flag wins over the variable";
  f.keyword.clear();
  f.tests = {"MathTest.*-MathTest.Slow"};
  EXPECT_EQ(left_out(f, {}), "--gtest_filter=MathTest.*-MathTest.Slow:A.b:P/C.d/0");

  // A shard declines: the shards of the filtered list are not the file's.
  const TestFile shard{"ops/math_test [shard 2 of 3]", "/proj/tests/ops/math_test", 1, 3};
  ProcessSpec p = plan_process(make_suite(Framework::kGtest), make_options(true), {}, shard);
  const std::vector<std::string> before = p.argv;
  EXPECT_FALSE(gtest.deselect(p, reported));
  EXPECT_EQ(p.argv, before);
}

TEST(PlanProcess, UnittestCannotNameTestsOfAFileThatIsNoModule) {
  TestFile f{"test-x.py", "/proj/tests/test-x.py"};
  f.tests = {"T::test_y"};
  EXPECT_THROW(plan_process(make_suite(Framework::kUnittest), make_options(true), {}, f),
               UsageError);
}

TEST(FindExecutable, SearchesPathLikeExecvp) {
  EXPECT_EQ(find_executable("sh", {{"PATH", "/nonexistent:/bin"}}), "/bin/sh");
  EXPECT_EQ(find_executable("no-such-program-xyz", {{"PATH", "/bin"}}), "");
  EXPECT_EQ(find_executable("./rel/py", {}), "./rel/py");
}

// A suite's tests run its project's console scripts by name (litgpt's `subprocess.run(["litgpt",
// ...])`): with the venv's interpreter they find them as in the activated venv of the project's CI.
TEST(ActivateInterpreterEnvironment, AVenvsBinFolderComesFirstOnPath) {
  TempDir dir;
  write_file(dir / "venv/pyvenv.cfg", "home = /usr/bin\n");
  write_file(dir / "venv/bin/python", "");
  Environment env{{"PATH", "/usr/bin:/bin"}, {"PYTHONHOME", "/elsewhere"}};
  activate_interpreter_environment(env, dir / "venv/bin/python");
  const std::string bin = (dir / "venv/bin").string();
  EXPECT_EQ(env.at("PATH"), bin + ":/usr/bin:/bin");
  EXPECT_EQ(env.at("VIRTUAL_ENV"), (dir / "venv").string());
  EXPECT_EQ(env.count("PYTHONHOME"), 0U);

  activate_interpreter_environment(env, dir / "venv/bin/python");
  EXPECT_EQ(env.at("PATH"), bin + ":/usr/bin:/bin") << "activated once, not twice";

  Environment bare;
  activate_interpreter_environment(bare, dir / "venv/bin/python");
  EXPECT_EQ(bare.at("PATH"), bin);
}

TEST(ActivateInterpreterEnvironment, ACondaEnvironmentSetsCondaPrefix) {
  TempDir dir;
  std::filesystem::create_directories(dir / "env/conda-meta");
  Environment env{{"PATH", "/bin"}};
  activate_interpreter_environment(env, dir / "env/bin/python");
  EXPECT_EQ(env.at("PATH"), (dir / "env/bin").string() + ":/bin");
  EXPECT_EQ(env.at("CONDA_PREFIX"), (dir / "env").string());
  EXPECT_EQ(env.count("VIRTUAL_ENV"), 0U);
}

TEST(ActivateInterpreterEnvironment, AnyOtherInterpreterLeavesTheEnvironmentAlone) {
  TempDir dir;
  write_file(dir / "usr/bin/python3", "");
  const Environment before{{"PATH", "/bin"}, {"PYTHONHOME", "/h"}};
  Environment env = before;
  activate_interpreter_environment(env, dir / "usr/bin/python3");
  EXPECT_EQ(env, before);
}

// docs/architecture.md#warm-start-on-macos: only macOS refuses the warm start, and says why.
TEST(WarmStartRefusal, OnlyMacOsRefusesIt) {
#if defined(__APPLE__)
  EXPECT_NE(warm_start_refusal().find("macOS"), std::string_view::npos);
#else
  EXPECT_TRUE(warm_start_refusal().empty()) << warm_start_refusal();
#endif
}

}  // namespace
}  // namespace devshim
