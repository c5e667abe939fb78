#include "parsers/pytest_junit.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/error.h"
#include "parsers/gap_attribution.h"
#include "parsers/line_reader.h"
#include "parsers/pytest_text.h"
#include "parsers/read_file.h"
#include "parsers/text.h"

namespace devshim {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxMessageBytes = std::size_t{2} * 1024;

// The first line of s, trimmed and capped (never cut inside a UTF-8 sequence).
std::string first_line(std::string_view s) {
  s = trim(s);
  s = s.substr(0, s.find('\n'));
  s = trim(s);
  return sanitize_text(cut_utf8(s, kMaxMessageBytes));
}

struct Outcome {
  CaseStatus status = CaseStatus::kPassed;
  pugi::xml_node element;  // the child that decided it; empty for a pass
};

Outcome outcome_of(pugi::xml_node testcase, int& xfails) {
  Outcome o;
  for (pugi::xml_node child : testcase.children()) {
    std::string_view tag = child.name();
    CaseStatus s;
    if (tag == "failure") {
      s = CaseStatus::kFailed;
    } else if (tag == "error") {
      s = CaseStatus::kError;
    } else if (tag == "skipped") {
      bool xfail = std::string_view(child.attribute("type").value()) == "pytest.xfail";
      if (xfail) ++xfails;
      s = xfail ? CaseStatus::kXfailed : CaseStatus::kSkipped;
    } else {
      continue;  // system-out, system-err, properties
    }
    if (!o.element || outcome_rank(s) > outcome_rank(o.status)) {
      o.status = s;
      o.element = child;
    }
  }
  return o;
}

// 'failed on setup with "RuntimeError: boom"' (pytest's message for setup/teardown errors) →
// 'RuntimeError: boom'.
std::string_view unwrap_error_message(std::string_view m) {
  if (m.starts_with("failed on ")) {
    std::size_t q = m.find(" with \"");
    if (q != std::string_view::npos && m.ends_with('"') && m.size() > q + 7) {
      return m.substr(q + 7, m.size() - q - 8);
    }
  }
  return m;
}

// The element's text as pytest printed it: pytest writes an ESC (of --color=yes output) as the
// text "#x1B", which would leave "#x1B[31m" in tracebacks; those sequences are removed, and what
// is not clean UTF-8 is cleaned as LineReader cleans a log.
std::string element_text(pugi::xml_node element) {
  std::string_view raw = element.child_value();
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size();) {
    if (raw.compare(i, 5, "#x1B[") == 0) {
      std::size_t j = i + 5;
      while (j < raw.size() && !(raw[j] >= 0x40 && raw[j] <= 0x7E)) ++j;
      i = j < raw.size() ? j + 1 : j;
      continue;
    }
    out.push_back(raw[i++]);
  }
  return sanitize_text(out);
}

// Exception, message, traceback and source of a failure or error element.
void fill_failure(TestCase& c, pugi::xml_node element, const std::string& file) {
  std::string text = element_text(element);
  c.traceback = pytest_traceback_text(text);
  PytestFailure f = summarize_pytest_failure(text, file);
  c.exception = std::move(f.exception);
  c.message = std::move(f.message);
  if (f.location) c.source = std::move(*f.location);
  if (c.exception.empty() && c.message.empty()) {
    std::string m = first_line(unwrap_error_message(element.attribute("message").value()));
    const std::string_view head = exception_prefix(m);
    if (!head.empty()) {
      c.exception = std::string(head);
      c.message = m.substr(head.size() + 2);
    } else {
      c.message = std::move(m);
    }
  }
  if (c.exception.empty()) {
    std::string_view type = element.attribute("type").value();
    if (!type.empty() && !type.starts_with("pytest.")) c.exception = std::string(type);
  }
}

std::string skip_reason(pugi::xml_node element) {
  std::string m = first_line(element.attribute("message").value());
  if (std::string_view(m).starts_with("Skipped: ")) m.erase(0, 9);
  return m;
}

// A module skipped as a whole: <skipped message="collection skipped">('/abs/tests/x.py', 2,
// 'Skipped: reason')</skipped>.
void fill_module_skip(TestCase& c, pugi::xml_node element) {
  std::string_view text = trim(element.child_value());
  c.message = skip_reason(element);
  if (!text.starts_with('(') || !text.ends_with(')')) return;
  std::size_t comma = text.find("', ");
  if (comma == std::string_view::npos) comma = text.find("\", ");
  if (comma != std::string_view::npos) {
    int line = 0;
    const char* first = text.data() + comma + 3;
    if (std::from_chars(first, text.data() + text.size(), line).ec == std::errc()) {
      c.source.line = line;
    }
  }
  std::size_t s = text.find("Skipped: ");
  if (s != std::string_view::npos) {
    std::string_view reason = text.substr(s + 9);
    reason.remove_suffix(1);  // ')'
    if (!reason.empty() && (reason.back() == '\'' || reason.back() == '"')) reason.remove_suffix(1);
    c.message = first_line(reason);
  }
}

class JunitReader {
 public:
  void suite(pugi::xml_node s) {
    tests_ += s.attribute("tests").as_int(0);
    failures_ += s.attribute("failures").as_int(0);
    errors_ += s.attribute("errors").as_int(0);
    skipped_ += s.attribute("skipped").as_int(0);
    for (pugi::xml_node child : s.children()) {
      std::string_view tag = child.name();
      if (tag == "testcase") {
        testcase(child);
      } else if (tag == "testsuite") {
        suite(child);
      }
    }
  }

  ParsedFile finish() {
    ReportedCounts& r = out_.reported;
    r.present = true;
    r.failed = failures_;
    r.errors = errors_;
    r.xfailed = xfails_;
    r.skipped = std::max(0, skipped_ - xfails_);
    r.passed = std::max(0, tests_ - failures_ - errors_ - skipped_);
    return std::move(out_);
  }

 private:
  void testcase(pugi::xml_node tc) {
    std::string name = tc.attribute("name").value();
    if (name.empty()) return;  // written for the test running at a KeyboardInterrupt
    std::string classname = tc.attribute("classname").value();
    std::string file = tc.attribute("file").value();
    pugi::xml_attribute line = tc.attribute("line");
    Outcome o = outcome_of(tc, xfails_);

    if (classname.empty() && (o.status == CaseStatus::kError || o.status == CaseStatus::kFailed)) {
      out_.import_error = true;  // collection error: the module could not be imported
      if (!out_.import_error_text.empty()) out_.import_error_text += "\n\n";
      out_.import_error_text += pytest_traceback_text(element_text(o.element));
      return;
    }

    TestCase c;
    c.classname = sanitize_text(classname);
    c.name = sanitize_text(name);
    c.status = o.status;
    double time = tc.attribute("time").as_double(0);
    c.duration_s = std::isfinite(time) && time > 0 ? time : 0;
    c.source.path = file;
    c.source.line = line && line.as_int(-1) >= 0 ? line.as_int() + 1 : 0;
    switch (o.status) {
      case CaseStatus::kFailed:
      case CaseStatus::kError:
        fill_failure(c, o.element, file);
        break;
      case CaseStatus::kSkipped:
        if (classname.empty()) {
          fill_module_skip(c, o.element);
        } else {
          c.message = skip_reason(o.element);
        }
        break;
      case CaseStatus::kXfailed:
        c.message = first_line(o.element.attribute("message").value());
        break;
      case CaseStatus::kPassed:
      case CaseStatus::kXpassed:
        break;
    }

    std::string key = c.classname + '\x1f' + c.name;
    auto [it, inserted] = index_.emplace(std::move(key), out_.cases.size());
    if (inserted) {
      out_.cases.push_back(std::move(c));
      return;
    }
    // Listed again (call failed, then error in teardown): keep the worse outcome.
    TestCase& prev = out_.cases[it->second];
    double total = prev.duration_s + c.duration_s;
    if (outcome_rank(c.status) > outcome_rank(prev.status)) prev = std::move(c);
    prev.duration_s = total;
  }

  ParsedFile out_;
  std::unordered_map<std::string, std::size_t> index_;
  int tests_ = 0, failures_ = 0, errors_ = 0, skipped_ = 0, xfails_ = 0;
};

}  // namespace

std::optional<ParsedFile> parse_pytest_junit(const std::filesystem::path& xml) {
  std::optional<std::string> data = read_file(xml);
  if (!data || trim(*data).empty()) return std::nullopt;
  pugi::xml_document doc;
  pugi::xml_parse_result ok = doc.load_buffer(data->data(), data->size());
  if (!ok) return std::nullopt;
  pugi::xml_node root = doc.document_element();
  std::string_view tag = root.name();
  JunitReader reader;
  if (tag == "testsuite") {
    reader.suite(root);
  } else if (tag == "testsuites") {
    for (pugi::xml_node s : root.children("testsuite")) reader.suite(s);
  } else {
    return std::nullopt;
  }
  return reader.finish();
}

ParsedFile parse_pytest_results(const std::filesystem::path& xml,
                                const std::filesystem::path& log) {
  std::optional<ParsedFile> junit = parse_pytest_junit(xml);
  if (!junit) {
    LineReader lines(log);
    return parse_pytest_text(lines);
  }
  ParsedFile text;
  try {
    LineReader lines(log);
    text = parse_pytest_text(lines);
  } catch (const RuntimeError&) {
    return std::move(*junit);  // the XML is complete; the log only refines it
  }
  std::unordered_map<std::string, const TestCase*> by_name;
  for (const TestCase& c : text.cases) by_name.emplace(c.classname + '\x1f' + c.name, &c);
  for (TestCase& c : junit->cases) {
    const bool child_failed = is_failure(c.status) && is_child_process_failure(c.exception);
    if (c.status != CaseStatus::kPassed && !child_failed) continue;
    auto it = by_name.find(c.classname + '\x1f' + c.name);
    if (it == by_name.end()) continue;
    if (child_failed) {
      // The XML has no captured output: the child process's traceback is the log's.
      const std::string& logged = it->second->traceback;
      if (std::size_t at = logged.rfind(kChildTracebackHeader); at != std::string::npos) {
        c.traceback += "\n" + logged.substr(at);
      }
    } else if (it->second->status == CaseStatus::kXpassed) {
      c.status = CaseStatus::kXpassed;
      c.message = it->second->message;
    }
  }
  if (!junit->unfinished && text.unfinished) {
    junit->unfinished = std::move(text.unfinished);
    junit->unfinished_ended_session = text.unfinished_ended_session;
  }
  if (text.reported.present) junit->reported = text.reported;
  return std::move(*junit);
}

}  // namespace devshim
