#include "runner/engine/collect.h"

#include <fmt/format.h>

#include <algorithm>

#include "parsers/pytest_text.h"
#include "parsers/traceback.h"
#include "runner/engine/frameworks/framework_traits.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSessionEnded = " ended the test session: ";

ParsedFile parse_output(const Suite& suite, const TestFile& file, const std::string& test_file,
                        const ProcessSpec& spec, std::string& parsed_from) {
  try {
    return framework_traits(suite.framework).parse(suite, file, test_file, spec, parsed_from);
  } catch (const std::exception&) {
    parsed_from.clear();
    return {};
  }
}

// "test_x[a-1]" / "test_x (i=1)" → "test_x"; "pkg.mod.Class" → "Class".
std::string function_of(const std::string& name) {
  return name.substr(0, name.find_first_of("[ ("));
}
std::string class_of(const std::string& classname) {
  auto dot = classname.rfind('.');
  std::string last = dot == std::string::npos ? classname : classname.substr(dot + 1);
  // A module path's last part ("test_x") is no class.
  return !last.empty() && last[0] >= 'A' && last[0] <= 'Z' ? last : std::string();
}

std::string culprit_message(const ProcessResult& r, FileStatus status) {
  switch (status) {
    case FileStatus::kTimeout:
      // The process ends after the timeout plus the time it took to die (up to --kill-grace).
      return fmt::format(
          "the file ran past its timeout of {:g}s and was killed ({:.0f}s after it "
          "started)",
          r.timeout_s, r.duration_s);
    case FileStatus::kInterrupted:
      return "killed: the run was interrupted";
    default:
      if (r.log_too_big) return "killed: its log passed the size limit (--max-log-mb)";
      return r.signal ? "process killed by " + signal_name(*r.signal) : "process died";
  }
}

// pytest reports source paths from its rootdir, which may lie above the project root when the
// project is a folder of a larger one whose pyproject.toml or pytest.ini pytest finds first:
// "sub/proj/tests/test_x.py" for tests/test_x.py. The way down that the test file's own path shows
// ("sub/proj/") is taken off every path that starts with it, so that paths and links are the
// project root's again. A path that exists under the project root as it is stays as it is.
void rebase_on_project_root(std::vector<TestCase>& cases, const fs::path& project_root,
                            const std::string& test_file) {
  const std::string tail = "/" + test_file;
  std::string prefix;
  for (const TestCase& c : cases) {
    const std::string& p = c.source.path;
    std::error_code ec;
    if (p.size() > tail.size() && p.ends_with(tail) && fs::path(p).is_relative() &&
        !fs::exists(project_root / p, ec)) {
      prefix = p.substr(0, p.size() - test_file.size());
      break;
    }
  }
  if (prefix.empty()) return;
  for (TestCase& c : cases) {
    if (c.source.path.starts_with(prefix)) c.source.path.erase(0, prefix.size());
  }
}

// Why a file that exited 0 without a word of its framework is an error, and what to check.
std::string silent_exit_note(const ProcessSpec& spec) {
  return fmt::format(
      "exited 0 without running a test or saying that it found none (no test result, no "
      "closing summary of the framework): is {} the interpreter or test binary meant?",
      spec.argv.empty() ? std::string("the command") : spec.argv.front());
}

}  // namespace

FileStatus status_from_process(const ProcessResult& r, Framework framework) {
  if (!r.launch_error.empty()) return FileStatus::kError;
  if (r.interrupted) return FileStatus::kInterrupted;
  if (r.timed_out) return FileStatus::kTimeout;
  if (r.signal || r.log_too_big) return FileStatus::kCrashed;
  const int code = r.exit_code.value_or(1);
  if (code == 0) return FileStatus::kPassed;
  return framework_traits(framework).exit_status(code).value_or(FileStatus::kFailed);
}

CollectedFile collect_results(const Suite& suite, const TestFile& file, const ProcessSpec& spec,
                              const ProcessResult& result) {
  CollectedFile out;
  const std::string test_file =
      (fs::path(suite.tests_dir) / file.rel_path).lexically_normal().generic_string();
  ParsedFile parsed = parse_output(suite, file, test_file, spec, out.parsed_from);
  out.reported = parsed.reported;
  out.import_error = parsed.import_error;
  out.cases = std::move(parsed.cases);

  // A collection error (pytest) comes with no case: record one, so that the error has a
  // message, a signature and a place in the reports like unittest's import errors.
  if (parsed.import_error && out.cases.empty() && !parsed.import_error_text.empty()) {
    PytestFailure failure = summarize_pytest_failure(parsed.import_error_text, test_file);
    TestCase c;
    c.classname = fs::path(test_file).replace_extension().generic_string();
    std::replace(c.classname.begin(), c.classname.end(), '/', '.');
    c.name = "<collection>";
    c.status = CaseStatus::kError;
    c.exception = failure.exception.empty() ? "CollectionError" : failure.exception;
    c.message = failure.message;
    c.traceback = pytest_traceback_text(parsed.import_error_text);
    if (failure.location) c.source = *failure.location;
    out.cases.push_back(std::move(c));
  }

  const FrameworkTraits& traits = framework_traits(suite.framework);
  const FileStatus ended = status_from_process(result, suite.framework);
  const bool killed = ended == FileStatus::kTimeout || ended == FileStatus::kCrashed ||
                      ended == FileStatus::kInterrupted;
  if (killed && parsed.unfinished) {
    TestCase culprit = std::move(*parsed.unfinished);
    culprit.status = CaseStatus::kError;
    culprit.culprit = std::string(to_string(ended));
    if (culprit.exception.empty()) {
      culprit.exception = ended == FileStatus::kTimeout ? "Timeout" : "ProcessKilled";
    }
    if (culprit.message.empty()) culprit.message = culprit_message(result, ended);
    out.cases.push_back(std::move(culprit));
  } else if (parsed.unfinished && parsed.unfinished_ended_session) {
    // The test itself ended the framework's session (it raised KeyboardInterrupt, or called
    // pytest.exit()): that exception is its verdict, and the file's later tests never ran.
    TestCase c = std::move(*parsed.unfinished);
    c.status = CaseStatus::kError;  // its exception is the parser's: pytest's banner names one
    if (c.message.empty()) c.message = "ended the test session in this test";
    out.note = session_ended_note(c.exception, c.name);
    out.cases.push_back(std::move(c));
  } else if (traits.records_test_cut_short_by_exit() && parsed.unfinished &&
             out.parsed_from == "log" && result.exit_code && *result.exit_code != 0) {
    // The binary exited by itself in the middle of a test (exit(), a failed check that exits):
    // GoogleTest wrote no XML, and that test has no verdict. It is recorded as an error.
    TestCase c = std::move(*parsed.unfinished);
    c.status = CaseStatus::kError;
    if (c.exception.empty()) c.exception = "ProcessExited";
    if (c.message.empty()) {
      c.message =
          fmt::format("the process exited with code {} during this test", *result.exit_code);
    }
    out.cases.push_back(std::move(c));
  }

  rebase_on_project_root(out.cases, suite.project_root, test_file);

  // Programs give their own source lines; only Python files have a `def` to look up.
  for (TestCase& c : out.cases) {
    if (!traits.runs_python()) break;
    if (c.source.line > 0 || !(is_failure(c.status) || !c.culprit.empty())) continue;
    if (auto line = find_def_line((suite.project_root / test_file).string(), function_of(c.name),
                                  class_of(c.classname))) {
      c.source = SourceLocation{test_file, *line};
    }
  }

  const bool only_import_errors =
      std::all_of(out.cases.begin(), out.cases.end(), is_import_error_case);
  const int code = result.exit_code.value_or(-1);
  const bool nothing_ran = out.reported.present && out.reported.ran == 0;
  if (ended == FileStatus::kError || killed) {
    out.status = ended;  // launch error, pytest collection/usage error, or killed
  } else if (code == 0 && out.cases.empty() && !out.reported.present && !out.import_error) {
    // Zero tests is never success: the framework said nothing at all, not even "no tests".
    out.status = FileStatus::kError;
    out.note = silent_exit_note(spec);
  } else if (traits.exit_status(code) == FileStatus::kNoTests ||
             (code == 0 && (out.cases.empty() || nothing_ran))) {
    out.status = FileStatus::kNoTests;
  } else if (code == 0) {
    out.status = FileStatus::kPassed;
  } else if ((out.import_error && only_import_errors) || out.cases.empty() || nothing_ran) {
    out.status = FileStatus::kError;  // e.g. setUpModule raised: no test ran
  } else {
    out.status = FileStatus::kFailed;  // a failing case, or a failing exit all the same
  }
  return out;
}

std::string session_ended_note(std::string_view exception, std::string_view test) {
  return fmt::format("{} in {}{}the file's tests after it did not run in that process", exception,
                     test, kSessionEnded);
}

bool is_session_ended_note(std::string_view note) {
  return note.find(kSessionEnded) != std::string_view::npos;
}

std::string log_path_in(const ProcessSpec& spec, const std::filesystem::path& out_dir) {
  return spec.log_path.lexically_relative(out_dir).generic_string();
}

FileRecord file_record(const std::string& rel_path, const CollectedFile& collected,
                       const ProcessResult& result, const ProcessSpec& spec,
                       const std::filesystem::path& out_dir) {
  FileRecord rec;
  rec.path = rel_path;
  rec.status = collected.status;
  rec.exit_code = result.exit_code;
  rec.signal = result.signal;
  rec.timed_out = result.timed_out;
  rec.duration_s = result.duration_s;
  rec.log_path = log_path_in(spec, out_dir);
  rec.started_at = iso8601_utc(result.started_at);
  rec.finished_at = iso8601_utc(result.finished_at);
  rec.parsed_from = collected.parsed_from;
  rec.reported = collected.reported;
  rec.note = collected.note;
  return rec;
}

}  // namespace devshim
