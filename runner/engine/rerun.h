// --rerun-failures N: the failing test files of a run (or, where the framework can name them,
// their failing tests alone) run again in fresh processes, up to N times; a test that fails and
// then passes is flaky (docs/cli.md, "Flaky tests").
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "parsers/test_result.h"
#include "runner/engine/command_runner.h"
#include "runner/engine/discovery.h"
#include "runner/engine/follow_up.h"
#include "runner/engine/launch_plan.h"
#include "runner/engine/process_pool.h"
#include "runner/engine/run_events.h"
#include "runner/engine/suite.h"

namespace devshim {

class Store;
class RunLog;

/// What to put on the command line instead of the whole file to run only these tests, or nullopt
/// when they cannot be named safely and the whole file must run again:
///   unittest: "tests.test_x.MyTest.test_y" (a subtest "test_y (i=1)" reruns test_y);
///   pytest:   "tests/test_x.py::MyTest::test_y[p-1]" (the class part from the JUnit classname
///             after the module's dotted path);
///   gtest:    one "--gtest_filter=Suite.Name:Suite.Other" argument.
/// The tests are named by their targets (runner/results/native_id.h, TestIds::target), turned
/// into selectors as test-level targets are (FrameworkTraits::test_selectors). Whole file: a test
/// without a target: an import or collection error, a fixture error (setUpClass, …), a test
/// without a name, a classname outside the file's module, a module path that is not a Python
/// identifier.
std::optional<std::vector<std::string>> rerun_selectors(const Suite& suite, const TestFile& file,
                                                        const std::vector<TestCase>& failing);

/// The process that runs file again with its log and JUnit XML under logs_dir, only the selected
/// tests when selectors are given (rerun_selectors): what a rerun and a trial of a setting start.
ProcessSpec plan_selected(const Suite& suite, const LaunchOptions& launch, const Environment& env,
                          const TestFile& file, const std::filesystem::path& logs_dir,
                          const std::optional<std::vector<std::string>>& selectors);

/// The process that reruns file (attempt >= 2): its own log and JUnit XML under
/// <out>/reruns/attempt-<attempt>/, only the selected tests when selectors are given (a gtest
/// shard then runs unsharded, its filter naming the tests). No redirection record.
ProcessSpec plan_rerun(const Suite& suite, const LaunchOptions& launch, const Environment& env,
                       const TestFile& file, const std::filesystem::path& out_dir, int attempt,
                       const std::optional<std::vector<std::string>>& selectors);

/// Reruns the failing files of run_id (files with status failed, error, timeout or crashed) among
/// files that have no reruns recorded yet (a resumed run's earlier session may have rerun some),
/// attempt 2 … options.passes + 1 (--rerun-failures N), each time only what still fails, and
/// records in the store every attempt of each rerun test, the flaky ones, and the files whose
/// failures all turned out flaky (now passed). files: the run's planned files. Each pass and its
/// progress go to events, what happens to log. The reruns' processes run through processes
/// (runner/engine/command_runner.h). Returns false when a signal interrupted the reruns (what
/// finished is recorded).
bool rerun_failures(const Suite& suite, const LaunchOptions& launch, const Environment& env,
                    const std::vector<TestFile>& files, Store& store, std::int64_t run_id,
                    RunLog& log, const FollowUpOptions& options, CommandRunner& processes,
                    RunSink& events);

}  // namespace devshim
