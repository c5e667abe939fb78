// From what a finished test process left behind to its file status and test cases.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parsers/test_result.h"
#include "runner/engine/discovery.h"
#include "runner/engine/launch_plan.h"
#include "runner/engine/process_pool.h"
#include "runner/engine/suite.h"
#include "runner/results/status.h"
#include "runner/results/store.h"

namespace devshim {

/// The file status that can be known from how the process ended, before its log is parsed:
/// launch error → error; interrupted → interrupted; timed out → timeout; signal → crashed; a log
/// past --max-log-mb → crashed, however it ended (the runner killed it, or cut its log after it
/// exited between two checks: the outcome must not hang on that timing);
/// exit 0 → passed; exit 5 → no_tests (pytest, and unittest since Python 3.12; not gtest);
/// pytest exit 2 (collection errors) or 4 (usage) → error; any other exit → failed.
FileStatus status_from_process(const ProcessResult& r, Framework framework);

struct CollectedFile {
  FileStatus status = FileStatus::kError;
  std::vector<TestCase> cases;  ///< the culprit of a killed process included
  std::string parsed_from;      ///< "junit", "log", or empty
  ReportedCounts reported;
  bool import_error = false;
  std::string note;  ///< why the status, when the results alone do not say; else empty
};

/// Parses the file's results (pytest: the JUnit XML refined by the log, else the log alone;
/// unittest: the log; gtest: GoogleTest's XML refined by the log, else the log alone, cases named
/// "<binary path, dotted>.<Suite>") and decides its status from both the results and how the
/// process ended, in this order:
///   launch error, or pytest exit 2/4 (collection or usage error) → error;
///   interrupted → interrupted; timed out → timeout; killed by a signal → crashed;
///   exit 0 with no test result and no closing summary of the framework → error (zero tests is
///   never success: the command ran no test framework; note says so);
///   exit 5 (not gtest), or exit 0 with no test run → no_tests; exit 0 → passed;
///   another exit with only import/collection errors or no test run (e.g. setUpModule raised)
///   → error; else → failed.
/// When the process was killed, the test running at that moment becomes a case with status
/// error and culprit "crashed", "timeout" or "interrupted". A gtest binary that exits non-zero by
/// itself in the middle of a test (no XML) gets that test as an error case (exception
/// "ProcessExited", no culprit). A test that ended pytest's session itself (it raised
/// KeyboardInterrupt or called pytest.exit(); pytest exits 2) is an error case with that
/// exception, no culprit, and the note says that the file's later tests did not run. A pytest
/// collection error becomes a case named "<collection>"
/// (unittest reports its import errors as a case already). Failing Python cases with no location
/// in the test file get the line of their `def`. Never throws for unreadable or malformed output.
CollectedFile collect_results(const Suite& suite, const TestFile& file, const ProcessSpec& spec,
                              const ProcessResult& result);

/// The note of a file whose session the test `test` ended itself with `exception` (see
/// collect_results); is_session_ended_note tells such a note, which --continue-after-crash goes on
/// after.
std::string session_ended_note(std::string_view exception, std::string_view test);
bool is_session_ended_note(std::string_view note);

/// Where a process's log is from out_dir (the run's output folder), as the store keeps it.
std::string log_path_in(const ProcessSpec& spec, const std::filesystem::path& out_dir);

/// The store's record of a finished file: its status, counts and how its process ended, its log
/// relative to out_dir (the run's output folder), start and finish times. The note is left empty:
/// the run or the rerun says why.
FileRecord file_record(const std::string& rel_path, const CollectedFile& collected,
                       const ProcessResult& result, const ProcessSpec& spec,
                       const std::filesystem::path& out_dir);

}  // namespace devshim
