#include "reports/junit_xml.h"

#include <fmt/format.h>

#include <map>
#include <pugixml.hpp>
#include <sstream>

#include "parsers/line_reader.h"

namespace devshim {

std::string xml_safe(const std::string& text) {
  std::string s = sanitize_text(text);  // valid UTF-8, no C0 controls but \t \n
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    // U+FFFE and U+FFFF are EF BF BE / EF BF BF.
    if (static_cast<unsigned char>(s[i]) == 0xEF && i + 2 < s.size() &&
        static_cast<unsigned char>(s[i + 1]) == 0xBF &&
        (static_cast<unsigned char>(s[i + 2]) == 0xBE ||
         static_cast<unsigned char>(s[i + 2]) == 0xBF)) {
      i += 2;
      continue;
    }
    out += s[i];
  }
  return out;
}

namespace {

// --rerun-failures' attempts, as Maven Surefire writes its reruns (Jenkins' JUnit plugin reads
// them): a flaky test passes, with a <flakyFailure> or <flakyError> per attempt that failed; a test
// that failed every time keeps its <failure> or <error> (the first attempt) and gets a
// <rerunFailure> or <rerunError> per rerun. Attempts that did not fail add nothing.
void add_attempts(pugi::xml_node tc, const ReportCase& c) {
  for (const CaseAttempt& a : c.attempts) {
    const bool failed = a.status == CaseStatus::kFailed;
    if (!failed && a.status != CaseStatus::kError) continue;
    if (!c.flaky && a.attempt <= 1) continue;  // the first attempt is the <failure> itself
    const char* tag = c.flaky ? (failed ? "flakyFailure" : "flakyError")
                              : (failed ? "rerunFailure" : "rerunError");
    auto e = tc.append_child(tag);
    e.append_attribute("message") = xml_safe(a.message).c_str();
    // CaseAttempt::message is a failure_text: its exception is the type, as for <failure>.
    const std::string_view type = exception_prefix(a.message);
    if (!type.empty()) e.append_attribute("type") = xml_safe(std::string(type)).c_str();
  }
}

}  // namespace

std::string render_junit(const Report& r) {
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  auto suites = doc.append_child("testsuites");
  suites.append_attribute("name") =
      xml_safe(fmt::format("{} run {}", r.run.suite, r.run.id)).c_str();
  int all_tests = 0, all_failures = 0, all_errors = 0, all_skipped = 0;
  double all_time = 0;
  // A differential run's lost tests, by file: errors of their file's suite, so that CI counts them.
  std::map<std::string, std::vector<const ReportDifferential::Test*>> lost;
  if (r.differential) {
    for (const auto& t : r.differential->lost) lost[t.file].push_back(&t);
  }
  for (const auto& f : r.files) {
    auto suite = suites.append_child("testsuite");
    suite.append_attribute("name") = xml_safe(f.file.path).c_str();
    int tests = 0, failures = 0, errors = 0, skipped = 0;
    auto add_case = [&](const std::string& classname, const std::string& name, double time,
                        const SourceLocation& src) {
      auto tc = suite.append_child("testcase");
      tc.append_attribute("classname") = xml_safe(classname).c_str();
      tc.append_attribute("name") = xml_safe(name).c_str();
      tc.append_attribute("time") = fmt::format("{:.3f}", time).c_str();
      if (!src.path.empty()) {
        tc.append_attribute("file") = xml_safe(src.path).c_str();
        if (src.line > 0) tc.append_attribute("line") = src.line;
      }
      ++tests;
      return tc;
    };
    for (const auto& c : f.cases) {
      const TestCase& t = c.test;
      auto tc = add_case(t.classname, t.name, t.duration_s, t.source);
      // As pytest writes a test's record_property: the CUDA path, and for a failure that passed
      // in the baseline whether it is a regression or a CUDA-branch failure.
      const bool verdict = c.diff_class == "regression" || c.diff_class == "cuda_branch_failed";
      if (c.cuda_path || verdict) {
        auto properties = tc.append_child("properties");
        auto property = [&](const char* name, const std::string& value) {
          auto p = properties.append_child("property");
          p.append_attribute("name") = name;
          p.append_attribute("value") = value.c_str();
        };
        if (c.cuda_path) property("devshim.cuda_path", "true");
        if (verdict) property("devshim.diff_class", c.diff_class);
      }
      const std::string message = failure_text(t);
      auto detail = [&](const char* tag) {
        auto e = tc.append_child(tag);
        e.append_attribute("message") = xml_safe(message).c_str();
        if (!t.exception.empty()) e.append_attribute("type") = xml_safe(t.exception).c_str();
        if (!t.traceback.empty()) e.text().set(xml_safe(t.traceback).c_str());
      };
      switch (t.status) {
        case CaseStatus::kFailed:
          detail("failure");
          ++failures;
          break;
        case CaseStatus::kError:
          detail("error");
          ++errors;
          break;
        case CaseStatus::kSkipped:
        case CaseStatus::kXfailed: {
          auto e = tc.append_child("skipped");
          e.append_attribute("message") =
              xml_safe((t.status == CaseStatus::kXfailed ? "xfail: " : "") + t.message).c_str();
          ++skipped;
          break;
        }
        default:
          break;
      }
      add_attempts(tc, c);
    }
    // A file that failed without any test result still shows in CI.
    if (f.cases.empty() && f.status != "passed" && f.status != "no_tests") {
      auto tc = add_case(f.file.path, "(file)", f.file.duration_s, SourceLocation{});
      auto e = tc.append_child(f.status == "not_run" ? "skipped" : "error");
      const std::string why = f.error ? file_error_text(*f.error) : f.file.note;
      e.append_attribute("message") =
          xml_safe(fmt::format("{}{}", f.status, why.empty() ? "" : ": " + why)).c_str();
      if (f.error && !f.error->exception.empty()) {
        e.append_attribute("type") = xml_safe(f.error->exception).c_str();
      }
      if (f.error && !f.error->traceback.empty())
        e.text().set(xml_safe(f.error->traceback).c_str());
      if (f.status == "not_run") {
        ++skipped;
      } else {
        ++errors;
      }
    }
    if (auto it = lost.find(f.file.path); it != lost.end()) {
      for (const ReportDifferential::Test* t : it->second) {
        auto tc = add_case(t->classname, t->name, 0, SourceLocation{});
        auto e = tc.append_child("error");
        e.append_attribute("message") =
            xml_safe(fmt::format("lost: {} without the shim, missing with it: {}",
                                 t->baseline_status, t->message))
                .c_str();
        e.append_attribute("type") = "lost";
        ++errors;
      }
    }
    suite.append_attribute("tests") = tests;
    suite.append_attribute("failures") = failures;
    suite.append_attribute("errors") = errors;
    suite.append_attribute("skipped") = skipped;
    suite.append_attribute("time") = fmt::format("{:.3f}", f.file.duration_s).c_str();
    all_tests += tests;
    all_failures += failures;
    all_errors += errors;
    all_skipped += skipped;
    all_time += f.file.duration_s;
  }
  suites.append_attribute("tests") = all_tests;
  suites.append_attribute("failures") = all_failures;
  suites.append_attribute("errors") = all_errors;
  suites.append_attribute("skipped") = all_skipped;
  suites.append_attribute("time") = fmt::format("{:.3f}", all_time).c_str();
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

}  // namespace devshim
