// What a parser extracts from what a test process left behind (log, JUnit XML): per-test results.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace devshim {

/// Outcome of one test case (the vocabulary of docs/database.md#status-values).
enum class CaseStatus { kPassed, kFailed, kError, kSkipped, kXfailed, kXpassed };

std::string_view to_string(CaseStatus s);
std::optional<CaseStatus> parse_case_status(std::string_view s);
/// failed or error. (xpassed is not: pytest counts a non-strict xpass as a pass and reports a
/// strict one as failed; a unittest file with unexpected successes fails through its exit code.)
bool is_failure(CaseStatus s);

/// A source location; path relative to the project root when the parser can tell, else as seen.
struct SourceLocation {
  std::string path;
  int line = 0;  ///< 1-based; 0 = unknown
};

/// A test's contact with the CUDA the shim masquerades, by the shim's redirection record
/// (docs/report-format.md#the-cuda-path), stored as results.cuda_path (database.md): none (0);
/// device work (1: it placed tensors or modules on the device a CUDA request was sent to; a record
/// of a shim before the two were told apart counted any contact so); only asked (2: its only
/// contact was a masqueraded query, seeding, a stream or synchronisation).
enum class CudaContact : unsigned char { kNone = 0, kDeviceWork = 1, kAsked = 2 };

struct TestCase {
  std::string
      classname;     ///< dotted: "tests.test_x.MyTest" (unittest) / "tests.test_x.MyTest" (pytest)
  std::string name;  ///< "test_foo", "test_foo (i=1)" for subtests, "setUpClass" for fixtures
  CaseStatus status = CaseStatus::kPassed;
  double duration_s = 0;  ///< 0 when the format gives none
  std::string exception;  ///< "AssertionError", "torch.OutOfMemoryError"; empty if none
  std::string message;    ///< first line of the exception message, or the skip reason
  std::string traceback;  ///< the whole traceback text as printed; may be empty
  SourceLocation source;  ///< where the test is defined / failed in the test file
  /// Set on the test that was running when its process died: "crashed", "timeout" or
  /// "interrupted" (its status is then error). Empty otherwise.
  std::string culprit;
  /// Under the shim: what the shim's redirection record says of the test's contact with CUDA
  /// while it ran. Set by the runner from the record, never by a parser.
  CudaContact cuda_contact = CudaContact::kNone;
  /// Under the shim: the test fails in code that runs only where CUDA is there, by its source (an
  /// `if torch.cuda.is_available():` block around a frame of its traceback). Set by the runner,
  /// never by a parser.
  bool fails_in_cuda_branch = false;
};

/// Whether a result stands for its file's import or collection error, not for a test: pytest's
/// `<collection>` (the runner records one per collection error, runner/engine/collect.cpp) and
/// unittest's `unittest.loader._FailedTest` (and the loader's other stand-ins).
bool is_import_error_case(const TestCase& c);

/// A failure in one line: "Exception: message", or whichever of the two is not empty. Reports,
/// `runner show`, `runner history` and rerun attempts show failures so.
std::string failure_text(const TestCase& c);

/// The exception that begins a failure text ("RuntimeError" of "RuntimeError: CUDA error"): a
/// name of letters, digits, '_' and '.' starting with a capital letter, followed by ": ". Empty
/// when the text does not begin so ("torch.OutOfMemoryError: ..." included: lower-case first);
/// the message is then the whole text, else what follows the ": ".
std::string_view exception_prefix(std::string_view text);

/// Which outcome wins when one test is reported more than once (call, then teardown;
/// subtests): passed < skipped < xfailed < xpassed < error < failed.
int outcome_rank(CaseStatus s);

/// Counts a framework printed about itself ("Ran N tests", "FAILED (failures=F, ...)",
/// pytest's "== 3 failed, 2 passed in 1.2s =="), to check the parser against.
/// For unittest, which prints no count of passes, passed is the number of passing cases.
struct ReportedCounts {
  std::optional<int> ran;  ///< unittest's "Ran N tests"
  int passed = 0, failed = 0, errors = 0, skipped = 0, xfailed = 0, xpassed = 0;
  bool present = false;  ///< a closing summary line was seen
};

/// Everything parsed from one test file's output.
struct ParsedFile {
  std::vector<TestCase> cases;
  ReportedCounts reported;
  bool import_error = false;      ///< the module could not be imported / collected: no test ran
  std::string import_error_text;  ///< its traceback
  /// The test that was running when the output stopped (crash/timeout culprit), if any.
  std::optional<TestCase> unfinished;
  /// The unfinished test ended the session itself, and the framework reported how: it raised
  /// KeyboardInterrupt or called pytest.exit() (pytest's "!!! KeyboardInterrupt !!!" banner).
  /// Its exception, message and line are then that report's.
  bool unfinished_ended_session = false;
};

}  // namespace devshim
