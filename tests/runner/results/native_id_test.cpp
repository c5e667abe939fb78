// test_ids on the names the parsers store (classname, name as in tests/parsers/fixtures): what
// each framework calls the test, and the target that selects it. tests/e2e/ids_e2e_test.cpp
// checks the same against the frameworks themselves.
#include "runner/results/native_id.h"

#include <gtest/gtest.h>

#include "runner/results/store.h"

namespace devshim {
namespace {

TEST(NativeId, PytestNodeIdsFromTheProjectRoot) {
  TestIds ids = test_ids("pytest", "tests", "sub/test_x.py", "tests.sub.test_x.TestC.Inner",
                         "test_y[a b-1.5]");
  EXPECT_EQ(ids.native, "tests/sub/test_x.py::TestC::Inner::test_y[a b-1.5]");
  EXPECT_EQ(ids.target, "sub/test_x.py::TestC::Inner::test_y[a b-1.5]");

  ids = test_ids("pytest", ".", "test_x.py", "test_x", "test_f");
  EXPECT_EQ(ids.native, "test_x.py::test_f");
  EXPECT_EQ(ids.target, "test_x.py::test_f");
}

TEST(NativeId, PytestWithARootdirBelowTheProjectRootStillNamesThePathFromTheRoot) {
  // pytest.ini in tests/: pytest's classname starts at the rootdir.
  const TestIds ids = test_ids("pytest", "tests", "test_x.py", "test_x.TestC", "test_y");
  EXPECT_EQ(ids.native, "tests/test_x.py::TestC::test_y");
  EXPECT_EQ(ids.target, "test_x.py::TestC::test_y");
}

TEST(NativeId, PytestWithARootdirAboveTheProjectRootStillNamesThePathFromTheRoot) {
  // The suite is a folder of a larger project (suites/cuda-idioms of devshim's own checkout, whose
  // pyproject.toml pytest takes for the rootdir): the classname has the way down as a prefix.
  TestIds ids = test_ids("pytest", "tests", "test_amp.py", "suites.cuda-idioms.tests.test_amp",
                         "test_autocast");
  EXPECT_EQ(ids.native, "tests/test_amp.py::test_autocast");
  EXPECT_EQ(ids.target, "test_amp.py::test_autocast");
  ids = test_ids("pytest", "tests", "test_amp.py", "repo.tests.test_amp.TestC.Inner", "test_y");
  EXPECT_EQ(ids.native, "tests/test_amp.py::TestC::Inner::test_y");
  EXPECT_EQ(ids.target, "test_amp.py::TestC::Inner::test_y");
  // A prefix must end at a dot: "xtests.test_amp" is another module.
  ids = test_ids("pytest", "tests", "test_amp.py", "xtests.test_amp", "test_y");
  EXPECT_EQ(ids.target, "");
}

TEST(NativeId, PytestNamesPathsThatAreNoPythonIdentifiers) {
  // pytest's classname is the path with '/' → '.', hyphens and all; it runs such files by path.
  const TestIds ids =
      test_ids("pytest", "tests", "e2e-x/test_y.py", "tests.e2e-x.test_y.C", "test_a");
  EXPECT_EQ(ids.native, "tests/e2e-x/test_y.py::C::test_a");
  EXPECT_EQ(ids.target, "e2e-x/test_y.py::C::test_a");
}

TEST(NativeId, PytestModuleSkippedWholeIsTheFileAndHasNoTarget) {
  const TestIds ids = test_ids("pytest", "tests", "test_x.py", "", "test_x.py");
  EXPECT_EQ(ids.native, "tests/test_x.py");
  EXPECT_EQ(ids.target, "");
}

TEST(NativeId, UnittestIdsAndSubtests) {
  TestIds ids = test_ids("unittest", "tests", "test_x.py", "tests.test_x.MyTest", "test_y");
  EXPECT_EQ(ids.native, "tests.test_x.MyTest.test_y");
  EXPECT_EQ(ids.target, "test_x.py::MyTest::test_y");

  ids = test_ids("unittest", "tests", "test_x.py", "tests.test_x.MyTest", "test_y (i=1)");
  EXPECT_EQ(ids.native, "tests.test_x.MyTest.test_y (i=1)");
  EXPECT_EQ(ids.target, "test_x.py::MyTest::test_y") << "a subtest runs with its test";
}

TEST(NativeId, UnittestFixtureErrorsAreUnittestsDescriptionWithoutATarget) {
  TestIds ids = test_ids("unittest", "tests", "test_x.py", "tests.test_x.MyTest",
                         "setUpClass (tests.test_x.MyTest)");
  EXPECT_EQ(ids.native, "setUpClass (tests.test_x.MyTest)");
  EXPECT_EQ(ids.target, "");

  ids = test_ids("unittest", "tests", "test_x.py", "unittest.loader._FailedTest", "tests.test_x");
  EXPECT_EQ(ids.native, "unittest.loader._FailedTest.tests.test_x");
  EXPECT_EQ(ids.target, "") << "an import failure is no test of the file";
}

TEST(NativeId, GtestNamesAreSuiteDotTest) {
  TestIds ids = test_ids("gtest", "bin", "ops/math_test", "ops.math_test.MathTest", "Adds");
  EXPECT_EQ(ids.native, "MathTest.Adds");
  EXPECT_EQ(ids.target, "ops/math_test::MathTest.Adds");

  ids = test_ids("gtest", "bin", "ops/math_test [shard 2 of 4]", "ops.math_test.Typed/0", "Works");
  EXPECT_EQ(ids.native, "Typed/0.Works");
  EXPECT_EQ(ids.target, "ops/math_test::Typed/0.Works");
}

TEST(NativeId, OtherFrameworksReadClassDotName) {
  EXPECT_EQ(test_ids("imported", "tests", "test_x.py", "tests.test_x.T", "test_y").native,
            "tests.test_x.T.test_y");
}

TEST(NativeId, RerunCommandKeepsWhatChangesTheTestAndQuotes) {
  RunRecord run;
  run.framework = "pytest";
  run.tests_dir = "tests";
  run.suite_file = "/src/suite dir/suite.json";
  run.mode = "baseline";
  run.command_line = {"/opt/runner", "suite",         "-j",    "4", "--db=/x/r.db",
                      "--python",    "/v/bin/python", "--out", "/o"};
  const TestIds ids = test_ids(run, "test_x.py", "tests.test_x", "test_y[it's]");
  EXPECT_EQ(rerun_command(run, ids),
            "/opt/runner '/src/suite dir/suite.json' 'test_x.py::test_y[it'\\''s]' --db /x/r.db "
            "--python /v/bin/python --no-shim");
  EXPECT_EQ(rerun_command(run, TestIds{"x", ""}), "") << "no target, no command";
}

}  // namespace
}  // namespace devshim
