#include "runner/engine/rerun.h"

#include <gtest/gtest.h>

namespace devshim {
namespace {

Suite suite_of(Framework f, const std::string& tests_dir = "tests") {
  Suite s;
  s.name = "demo";
  s.project_root = "/proj";
  s.tests_dir = tests_dir;
  s.framework = f;
  s.python = "/usr/bin/python3";
  return s;
}

TestCase failing(const std::string& classname, const std::string& name) {
  TestCase c;
  c.classname = classname;
  c.name = name;
  c.status = CaseStatus::kFailed;
  return c;
}

using Ids = std::optional<std::vector<std::string>>;

TEST(RerunSelectors, UnittestIdsFromClassAndMethod) {
  const Suite s = suite_of(Framework::kUnittest);
  const TestFile f{"sub/test_x.py", "/proj/tests/sub/test_x.py"};
  EXPECT_EQ(rerun_selectors(s, f,
                            {failing("tests.sub.test_x.T", "test_a"),
                             failing("tests.sub.test_x.T", "test_b (i=1)"),
                             failing("tests.sub.test_x.T", "test_b (i=2)")}),
            (Ids{{"tests.sub.test_x.T.test_a", "tests.sub.test_x.T.test_b"}}));
  // What cannot be named: the whole file runs again.
  EXPECT_EQ(rerun_selectors(s, f, {failing("unittest.loader._FailedTest", "test_x")}),
            std::nullopt);
  EXPECT_EQ(rerun_selectors(s, f, {failing("tests.sub.test_x.T", "setUpClass")}), std::nullopt);
  EXPECT_EQ(rerun_selectors(s, f, {failing("tests.sub.test_x", "setUpClass (tests.sub.test_x.T)")}),
            std::nullopt);
  EXPECT_EQ(rerun_selectors(s, f, {}), std::nullopt);
  EXPECT_EQ(rerun_selectors(s, TestFile{"test-y.py", "/proj/tests/test-y.py"},
                            {failing("tests.test-y.T", "test_a")}),
            std::nullopt)
      << "not importable by name";
}

TEST(RerunSelectors, PytestNodeIds) {
  const Suite s = suite_of(Framework::kPytest);
  const TestFile f{"test_x.py", "/proj/tests/test_x.py"};
  EXPECT_EQ(rerun_selectors(
                s, f,
                {failing("tests.test_x", "test_fn[a-1]"), failing("tests.test_x.TestC", "test_m"),
                 failing("tests.test_x.TestC.Inner", "test_n")}),
            (Ids{{"tests/test_x.py::test_fn[a-1]", "tests/test_x.py::TestC::test_m",
                  "tests/test_x.py::TestC::Inner::test_n"}}));
  EXPECT_EQ(rerun_selectors(s, f, {failing("tests.test_x", "<collection>")}), std::nullopt);
  EXPECT_EQ(rerun_selectors(s, f, {failing("test_x.TestC", "test_m")}),
            (Ids{{"tests/test_x.py::TestC::test_m"}}))
      << "a rootdir below the project root: the classname starts at a tail of the dotted path";
  EXPECT_EQ(rerun_selectors(s, f, {failing("tests.test_xy", "test_m")}), std::nullopt);
}

TEST(RerunSelectors, GtestFilter) {
  const Suite s = suite_of(Framework::kGtest, "bin");
  const TestFile f{"ops/math_test", "/proj/bin/ops/math_test"};
  EXPECT_EQ(rerun_selectors(s, f,
                            {failing("ops.math_test.Add", "Works"),
                             failing("ops.math_test.Inst/Param", "Case/0")}),
            (Ids{{"--gtest_filter=Add.Works:Inst/Param.Case/0"}}));
  EXPECT_EQ(rerun_selectors(s, f, {failing("other.Add", "Works")}), std::nullopt);
}

TEST(PlanRerun, OwnLogsAndOnlyTheSelectedTests) {
  const Suite s = suite_of(Framework::kPytest);
  LaunchOptions launch;
  launch.logs_dir = "/out/logs";
  const TestFile f{"test_x.py", "/proj/tests/test_x.py"};
  ProcessSpec spec = plan_rerun(s, launch, {}, f, "/out", 2,
                                Ids{{"tests/test_x.py::test_a", "tests/test_x.py::test_b"}});
  EXPECT_EQ(spec.log_path, "/out/reruns/attempt-2/test_x.py.log");
  EXPECT_EQ(spec.junit_path, "/out/reruns/attempt-2/test_x.py.xml");
  ASSERT_GE(spec.argv.size(), 2U);
  EXPECT_EQ(spec.argv[spec.argv.size() - 2], "tests/test_x.py::test_a");
  EXPECT_EQ(spec.argv.back(), "tests/test_x.py::test_b");
  EXPECT_EQ(std::count(spec.argv.begin(), spec.argv.end(), "tests/test_x.py"), 0);
  ProcessSpec whole = plan_rerun(s, launch, {}, f, "/out", 3, std::nullopt);
  EXPECT_EQ(whole.argv.back(), "tests/test_x.py");
  EXPECT_EQ(whole.log_path, "/out/reruns/attempt-3/test_x.py.log");

  const Suite g = suite_of(Framework::kGtest, "bin");
  TestFile shard{"math_test [shard 2 of 4]", "/proj/bin/math_test", 1, 4};
  ProcessSpec gs = plan_rerun(g, launch, {}, shard, "/out", 2, Ids{{"--gtest_filter=A.b"}});
  EXPECT_EQ(gs.argv.back(), "--gtest_filter=A.b");
  EXPECT_EQ(gs.env.count("GTEST_TOTAL_SHARDS"), 0U) << "the filter names the tests";
}

}  // namespace
}  // namespace devshim
