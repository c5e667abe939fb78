// What the runner knows of each test framework, in one place per framework: unittest.cpp,
// pytest.cpp, gtest.cpp. Nothing outside runner/engine/frameworks/ asks which framework a suite
// uses; it asks framework_traits(suite.framework).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "parsers/test_result.h"
#include "runner/engine/discovery.h"
#include "runner/engine/launch_plan.h"
#include "runner/engine/suite.h"
#include "runner/results/status.h"

namespace devshim {

class FrameworkTraits {
 public:
  virtual ~FrameworkTraits() = default;

  /// True when the files are Python files run by suite.json's interpreter; false when each file
  /// is a program of its own (found by being executable; no `def` lines, no interpreter needed).
  virtual bool runs_python() const = 0;

  /// Adjusts the environment every process of the suite starts from (child_environment).
  virtual void adjust_environment(Environment& /*env*/) const {}

  /// The command line of one file's process (python: the interpreter, unused by programs), its
  /// results written to junit_path where the framework writes a results file.
  virtual std::vector<std::string> command(const Suite& suite, const std::string& python,
                                           const TestFile& file,
                                           const std::filesystem::path& junit_path) const = 0;

  /// Fills in one file's process: log_path and junit_path (empty when the framework writes no
  /// results file) under logs_dir, per-file environment entries, and argv (command). spec.env
  /// holds the environment given to plan_process.
  virtual void plan(const Suite& suite, const std::string& python, const TestFile& file,
                    const std::filesystem::path& logs_dir, ProcessSpec& spec) const = 0;

  /// What an exit code other than 0 says by itself when the framework gives it a meaning
  /// (e.g. pytest's 5: no tests collected); nullopt: a plain failure.
  virtual std::optional<FileStatus> exit_status(int code) const = 0;

  /// The results of a finished process (test_file: the file's path from the project root).
  /// parsed_from: "junit" or "log" for what was read; left empty (and {} returned) when there
  /// was nothing to read. May throw for malformed output: the caller keeps what it has.
  virtual ParsedFile parse(const Suite& suite, const TestFile& file, const std::string& test_file,
                           const ProcessSpec& spec, std::string& parsed_from) const = 0;

  /// True when a process that exits by itself in the middle of a test (no results file) leaves
  /// that test as a case without a verdict to record as an error (a GoogleTest binary's exit()).
  virtual bool records_test_cut_short_by_exit() const { return false; }

  /// Puts selectors (from test_selectors) on a planned process's command line.
  virtual void select(ProcessSpec& spec, const std::vector<std::string>& selectors) const = 0;

  /// The selectors of file.tests (test-level targets, not empty) for select. Throws UsageError
  /// when the framework cannot select a test of this file by name.
  virtual std::vector<std::string> test_selectors(const Suite& suite,
                                                  const TestFile& file) const = 0;

  /// Adds the framework's keyword selection (`-k EXPR`) to a planned process's command line.
  virtual void add_keyword(ProcessSpec& spec, const std::string& keyword) const = 0;

  /// Leaves the tests named by selectors (from test_selectors) out of a planned process's run
  /// (pytest: `--deselect ID` each). False when the framework cannot: the command is unchanged.
  virtual bool deselect(ProcessSpec& /*spec*/,
                        const std::vector<std::string>& /*selectors*/) const {
    return false;
  }

  /// Has a shim process name in its redirection record the tests that took a CUDA path
  /// (devshim/test_hooks.py): pytest loads the shim's plugin (`-p devshim.pytest_plugin`);
  /// unittest's tests are named by the shim itself while the record is on; others name none.
  virtual void name_tests_in_record(ProcessSpec& /*spec*/) const {}
};

/// The traits of framework f.
const FrameworkTraits& framework_traits(Framework f);

}  // namespace devshim
