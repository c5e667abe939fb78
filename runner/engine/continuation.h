// --continue-after-crash N: a test file whose process a signal ended in the middle of a test (the
// kernel's OOM killer, a segfault, an abort), or one of whose tests ended pytest's session itself
// (KeyboardInterrupt, pytest.exit()), runs again without the tests it reported, so that one test
// does not lose the rest of its file (docs/cli.md, "Continuing after a crash").
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

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

/// Continues the files among `files` that run_id recorded as crashed, or as ended by a test
/// (is_session_ended_note), after reporting at least one test, where the framework can leave tests
/// out by name (FrameworkTraits::deselect: pytest's --deselect, GoogleTest's negative filter
/// patterns): each runs again, its log and JUnit XML under <out>/continued/<k>/, without every test
/// its earlier processes reported (the crash's culprit, the test that ended the session included),
/// up to options.passes times (--continue-after-crash N) while each process is cut short again
/// after reporting new tests. The new tests' results join the file's in the store; the file keeps
/// its status, its note says how many more tests ran and where their logs are. A continuation
/// writes no redirection record. Each pass and its progress go to events. Returns false when a
/// signal interrupted it (what finished is recorded).
bool continue_crashed_files(const Suite& suite, const LaunchOptions& launch, const Environment& env,
                            const std::vector<TestFile>& files, Store& store, std::int64_t run_id,
                            RunLog& log, const FollowUpOptions& options, CommandRunner& processes,
                            RunSink& events);

}  // namespace devshim
