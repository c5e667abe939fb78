#include "runner/collect.h"

#include <fmt/format.h>

#include "parsers/line_reader.h"
#include "parsers/pytest_junit.h"
#include "parsers/traceback.h"
#include "parsers/unittest_parser.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

ParsedFile parse_output(const Suite& suite, const std::string& test_file, const ProcessSpec& spec,
                        std::string& parsed_from) {
  std::error_code ec;
  try {
    if (suite.framework == Framework::kPytest) {
      // The XML when pytest finished writing it (refined by the log: xpasses, closing counts),
      // else the log alone.
      const bool xml = !spec.junit_path.empty() && fs::exists(spec.junit_path, ec) &&
                       parse_pytest_junit(spec.junit_path).has_value();
      if (!xml && !fs::exists(spec.log_path, ec)) return {};
      ParsedFile parsed = parse_pytest_results(spec.junit_path, spec.log_path);
      parsed_from = xml ? "junit" : "log";
      return parsed;
    }
    if (!fs::exists(spec.log_path, ec)) return {};
    LineReader lines(spec.log_path);
    parsed_from = "log";
    return parse_unittest_log(lines, test_file);
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
      return fmt::format("the file ran past its timeout and was killed after {:.0f}s",
                         r.duration_s);
    case FileStatus::kInterrupted:
      return "killed: the run was interrupted";
    default:
      return r.signal ? "process killed by " + signal_name(*r.signal) : "process died";
  }
}

}  // namespace

CollectedFile collect_results(const Suite& suite, const TestFile& file, const ProcessSpec& spec,
                              const ProcessResult& result) {
  CollectedFile out;
  const std::string test_file =
      (fs::path(suite.tests_dir) / file.rel_path).lexically_normal().generic_string();
  ParsedFile parsed = parse_output(suite, test_file, spec, out.parsed_from);
  out.reported = parsed.reported;
  out.import_error = parsed.import_error;
  out.cases = std::move(parsed.cases);

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
  }

  for (TestCase& c : out.cases) {
    if (c.source.line > 0 || !(is_failure(c.status) || !c.culprit.empty())) continue;
    if (auto line = find_def_line((suite.project_root / test_file).string(), function_of(c.name),
                                  class_of(c.classname))) {
      c.source = SourceLocation{test_file, *line};
    }
  }

  bool any_failure = false;
  bool only_import_errors = true;
  for (const TestCase& c : out.cases) {
    any_failure = any_failure || is_failure(c.status);
    if (c.classname.rfind("unittest.loader.", 0) != 0) only_import_errors = false;
  }
  const int code = result.exit_code.value_or(-1);
  if (ended == FileStatus::kError || killed) {
    out.status = ended;
  } else if (out.import_error && only_import_errors) {
    out.status = FileStatus::kError;
  } else if (code == 5 || (code == 0 && out.cases.empty())) {
    out.status = FileStatus::kNoTests;
  } else if (code == 0) {
    out.status = FileStatus::kPassed;
  } else if (any_failure) {
    out.status = FileStatus::kFailed;
  } else if (ended == FileStatus::kError || out.cases.empty()) {
    out.status = FileStatus::kError;
  } else {
    out.status = FileStatus::kFailed;
  }
  return out;
}

}  // namespace devshim
