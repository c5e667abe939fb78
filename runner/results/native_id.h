// A test's name in its own framework's words, read from what the store holds (the run's framework
// and tests folder, the file, the class name and the test name), and the TARGET that makes the
// runner run that one test again (docs/cli.md#targets). One place knows how each framework names
// its tests; reports, `runner show`, `runner compare` and the site print what it says.
#pragma once

#include <string>
#include <string_view>

namespace devshim {

struct TestIds {
  /// What the framework itself calls the test, and accepts to select it:
  ///   pytest    tests/test_x.py::TestC::test_y[a-1]   (its node id, relative to the project root)
  ///   unittest  tests.test_x.MyTest.test_y            (TestCase.id(); a subtest keeps " (i=1)")
  ///   gtest     MathTest.Adds                         (the --gtest_filter name)
  /// A name the run could not place in its file is the framework's own description of it where
  /// it has one (a unittest fixture error or import failure; a pytest module skipped as a whole
  /// is its file), else "FILE::classname::name" (a pytest class name outside the file's module);
  /// a run of another framework (`imported`) reads "classname.name".
  std::string native;
  /// "FILE::REST": FILE relative to the tests folder, REST the test in it (pytest and unittest:
  /// classes and test, "::"-separated, pytest parameters included; gtest: Suite.Test). Empty
  /// when the test cannot be selected on its own (a fixture error, a module skipped whole, a
  /// name outside its file's module).
  std::string target;
};

/// framework: runs.framework ("pytest", "unittest", "gtest", "imported"); tests_dir: the suite's
/// tests folder as written, relative to the project root ("tests", "."); file: the file relative
/// to it (a gtest shard keeps its " [shard 2 of 4]" suffix, which is dropped).
TestIds test_ids(std::string_view framework, std::string_view tests_dir, std::string_view file,
                 std::string_view classname, std::string_view name);

/// "tests/sub/test_x.py" → "tests.sub.test_x": the module a Python file is imported as from the
/// project root; empty when the path is no .py file or a part is no Python identifier.
std::string python_module(std::string_view path_from_root);

struct RunRecord;

/// test_ids of a test of a recorded run (its framework and tests folder).
TestIds test_ids(const RunRecord& run, std::string_view file, std::string_view classname,
                 std::string_view name);

/// What reports print for a test of run: TestIds::native, and "FILE::(file)" for the stand-in of
/// a file that failed without reporting a test (classname empty, name "(file)").
std::string test_label(const RunRecord& run, std::string_view file, std::string_view classname,
                       std::string_view name);

/// The command that runs one test again the way run ran it: the runner as the run was started,
/// its suite file, the test's target, and of the run's options those that change what the test
/// sees (--no-shim, --python, --shim-dir, --timeout) or where it is recorded (--db). Empty when
/// the test has no target (TestIds::target).
std::string rerun_command(const RunRecord& run, const TestIds& ids);

/// A single word for a POSIX shell: s unchanged when it holds only characters no shell treats
/// specially, else in single quotes (a quote inside as '\'').
std::string shell_word(std::string_view s);

}  // namespace devshim
