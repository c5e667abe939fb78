// The checks the parser fuzz targets run on one input (fuzz/*_fuzz.cpp), shared with the ordinary
// test run (tests/fuzz/fuzz_regressions_test.cpp), which replays the seed corpora and every
// input a fuzzer found through the same functions. Header only: it needs the parsers alone.
//
// What is checked (docs/reliability.md): the parser returns (no crash, no uncaught exception, no
// sanitizer report, no hang), and what it returns keeps the promises of its header that hold for
// any input (statuses in range, the documented caps on messages and tracebacks).
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "parsers/gap_attribution.h"
#include "parsers/gtest_text.h"
#include "parsers/gtest_xml.h"
#include "parsers/line_reader.h"
#include "parsers/pytest_junit.h"
#include "parsers/pytest_text.h"
#include "parsers/signature.h"
#include "parsers/test_result.h"
#include "parsers/torchdevice_log.h"
#include "parsers/traceback.h"
#include "parsers/unittest_parser.h"

namespace devshim::fuzz {

/// What a violated check does: the fuzz targets abort (libFuzzer records the input as a crash);
/// the regression test replaces it with one that throws, so that gtest names the input.
using ViolationHandler = void (*)(const char* what);
inline void abort_on_violation(const char* what) {
  std::fprintf(stderr, "devshim fuzz check failed: %s\n", what);
  std::abort();
}
inline ViolationHandler& on_violation() {
  static ViolationHandler handler = &abort_on_violation;
  return handler;
}
inline void check(bool ok, const char* what) {
  if (!ok) on_violation()(what);
}

/// The input as a file (the XML readers take paths): one file per process, rewritten each call.
inline std::filesystem::path scratch_file(std::string_view data, const char* suffix) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("devshim_fuzz_" + std::to_string(::getpid()) + suffix);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return path;
}

inline void check_case(const TestCase& c) {
  check(outcome_rank(c.status) >= 0, "case status out of range");
  check(c.source.line >= 0, "negative source line");
  check(c.culprit.empty() || c.culprit == "crashed" || c.culprit == "timeout" ||
            c.culprit == "interrupted",
        "unknown culprit");
}

inline void check_parsed(const ParsedFile& p) {
  for (const TestCase& c : p.cases) check_case(c);
  if (p.unfinished) {
    check_case(*p.unfinished);
    check(p.unfinished->status == CaseStatus::kError, "unfinished test is not an error");
  }
  check(!p.unfinished_ended_session || p.unfinished, "a session ended by no unfinished test");
  const ReportedCounts& r = p.reported;
  check(r.passed >= 0 && r.failed >= 0 && r.errors >= 0 && r.skipped >= 0 && r.xfailed >= 0 &&
            r.xpassed >= 0,
        "negative reported count");
}

/// unittest_fuzz: `python -m unittest -v` output.
inline void run_unittest(std::string_view data) {
  LineReader lines = LineReader::from_string(std::string(data));
  check_parsed(parse_unittest_log(lines, "tests/test_x.py"));
  // A short line limit exercises the truncation path as well.
  LineReader short_lines = LineReader::from_string(std::string(data), 64);
  check_parsed(parse_unittest_log(short_lines));
}

/// pytest_text_fuzz: `pytest -v -ra`/`-rA` output, and the longrepr helpers it uses.
inline void run_pytest_text(std::string_view data) {
  LineReader lines = LineReader::from_string(std::string(data));
  check_parsed(parse_pytest_text(lines));
  const PytestFailure f = summarize_pytest_failure(data, "tests/test_x.py");
  check(f.message.find('\n') == std::string::npos, "pytest failure message spans lines");
  check(!f.location || f.location->path == "tests/test_x.py", "pytest location outside the file");
  check(pytest_traceback_text(data).size() <= data.size() + 64,
        "pytest traceback grew beyond its input");
  const std::string_view first_line = data.substr(0, data.find('\n'));
  (void)split_pytest_nodeid(first_line);
}

/// pytest_junit_fuzz: pytest's JUnit XML, alone and refined by a log (the same bytes).
inline void run_pytest_junit(std::string_view data) {
  const std::filesystem::path xml = scratch_file(data, ".xml");
  if (auto parsed = parse_pytest_junit(xml)) check_parsed(*parsed);
  check_parsed(parse_pytest_results(xml, xml));
}

inline GtestContext fuzz_gtest_context() {
  GtestContext ctx;
  ctx.classname_prefix = "ops.math_test";
  ctx.project_root = "/src";
  return ctx;
}

inline void check_gtest_message(std::string_view body) {
  const std::string m = gtest_message(body);
  check(m.find('\n') == std::string::npos, "gtest message spans lines");
  check(m.size() <= 2048 + 8, "gtest message longer than 2 KiB");
}

/// gtest_xml_fuzz: GoogleTest's XML, alone and with a console log (the same bytes).
inline void run_gtest_xml(std::string_view data) {
  const std::filesystem::path xml = scratch_file(data, ".gtest.xml");
  const GtestContext ctx = fuzz_gtest_context();
  if (auto parsed = parse_gtest_xml(xml, ctx)) check_parsed(*parsed);
  check_parsed(parse_gtest_results(xml, xml, ctx));
  const GtestPart part = split_gtest_part(data);
  check(part.line >= 0, "negative gtest part line");
}

/// gtest_text_fuzz: GoogleTest's console output and the failure-text helpers.
inline void run_gtest_text(std::string_view data) {
  LineReader lines = LineReader::from_string(std::string(data));
  check_parsed(parse_gtest_text(lines, fuzz_gtest_context()));
  check_gtest_message(data);
  const GtestPart part = split_gtest_part(data);
  check_gtest_message(part.body);
  (void)gtest_traceback({part, part}, false);
}

/// traceback_fuzz: Python tracebacks, failure signatures and gap attribution. The input is
/// split at the first two NUL bytes into exception, message and traceback (all of it is the
/// traceback when it holds none).
inline void run_traceback(std::string_view data) {
  const ParsedTraceback tb = parse_traceback(data);
  for (const TracebackFrame& f : tb.frames) check(f.line >= 0, "negative frame line");
  if (auto loc = location_in_file(tb, "tests/test_x.py")) {
    check(loc->line >= 0, "negative location line");
  }
  for (const TracebackFrame& f : failure_frames(data)) check(f.line >= 0, "negative frame line");
  const std::string sig = failure_signature(tb.exception, tb.message);
  check(sig.size() == 16 && sig.find_first_not_of("0123456789abcdef") == std::string::npos,
        "signature is not 16 hex digits");
  check(failure_signature(tb.exception, tb.message) == sig, "signature not deterministic");
  (void)normalize_message(data);
  (void)module_of_file(data.substr(0, data.find('\n')));

  std::string_view exception, message, traceback = data;
  if (auto a = data.find('\0'); a != std::string_view::npos) {
    exception = data.substr(0, a);
    std::string_view rest = data.substr(a + 1);
    auto b = rest.find('\0');
    message = rest.substr(0, b);
    traceback = b == std::string_view::npos ? std::string_view() : rest.substr(b + 1);
  }
  if (auto gap = attribute_failure(exception, message, traceback)) {
    check(!gap->api.empty(), "gap attribution without an API");
    check(gap->kind == kGapFailing || gap->kind == kGapUnsupportedOp || gap->kind == kGapCudaOnly,
          "gap attribution of an unknown kind");
  }
}

/// import_log_fuzz: the overall log of a TorchDevice log folder, read as `runner import` reads it
/// (LineReader, then parse_finished_line on every line), and whole by read_overall_log.
inline void run_import_log(std::string_view data) {
  LineReader lines = LineReader::from_string(std::string(data));
  std::string_view line;
  std::size_t finished = 0;
  while (lines.next(line)) {
    const auto f = parse_finished_line(line);
    if (!f) continue;
    ++finished;
    check(line.find("Finished test: ") != std::string_view::npos, "finished line without marker");
    check(f->module.empty() || (f->module.front() != ' ' && f->module.back() != ' '),
          "module name not trimmed");
    check(!std::isnan(f->duration_s), "duration is NaN");
  }
  LineReader again = LineReader::from_string(std::string(data));
  const OverallLog log = read_overall_log(again);
  check(log.finished.size() <= finished, "the overall log has more finished files than lines");
  for (const FinishedLine& f : log.finished) {
    check(module_path(f.module).ends_with(".py"), "a module's path does not end in .py");
  }
}

}  // namespace devshim::fuzz
