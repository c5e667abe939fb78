#include "parsers/gtest_xml.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "parsers/line_reader.h"
#include "parsers/read_file.h"

namespace devshim {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kNonTestSuiteFailure = "NonTestSuiteFailure";

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

// A <failure> or <skipped> element as a part: its text ("path:line\nmessage"), else its
// message attribute, which GoogleTest fills with the same.
GtestPart part_of(pugi::xml_node element) {
  std::string_view text = element.child_value();
  if (blank(text)) text = element.attribute("message").value();
  return split_gtest_part(sanitize_text(text));
}

class GtestXmlReader {
 public:
  explicit GtestXmlReader(const GtestContext& ctx) : ctx_(ctx) {}

  void suite(pugi::xml_node s) {
    const std::string_view name = s.attribute("name").value();
    if (name == kNonTestSuiteFailure) {
      environment(s);
      return;
    }
    const int tests = s.attribute("tests").as_int(0);
    const int disabled = s.attribute("disabled").as_int(0);
    ran_ += std::max(0, tests - disabled);
    failures_ += s.attribute("failures").as_int(0) + s.attribute("errors").as_int(0);
    skipped_ += s.attribute("skipped").as_int(0);
    for (pugi::xml_node tc : s.children("testcase")) testcase(tc, name);
  }

  ParsedFile finish() {
    ReportedCounts& r = out_.reported;
    r.present = true;
    r.ran = ran_;
    r.failed = failures_;
    r.skipped = skipped_;
    r.passed = std::max(0, ran_ - failures_ - skipped_);
    return std::move(out_);
  }

 private:
  void testcase(pugi::xml_node tc, std::string_view suite) {
    if (std::string_view(tc.attribute("status").value()) == "notrun") return;  // DISABLED_
    std::vector<GtestPart> failures;
    std::optional<GtestPart> skip;
    for (pugi::xml_node child : tc.children()) {
      std::string_view tag = child.name();
      if (tag == "failure" || tag == "error") {
        failures.push_back(part_of(child));
      } else if (tag == "skipped" && !skip) {
        skip = part_of(child);
      }
    }
    std::string_view classname = tc.attribute("classname").value();
    if (classname.empty()) classname = suite;
    const std::string name = sanitize_text(tc.attribute("name").value());
    if (name.empty()) {  // failures of the suite itself (SetUpTestSuite / TearDownTestSuite)
      if (!failures.empty())
        out_.cases.push_back(error_case(classname, kGtestSuiteFixture, failures));
      return;
    }

    TestCase c;
    c.classname = sanitize_text(gtest_classname(ctx_, classname));
    c.name = name;
    double time = tc.attribute("time").as_double(0);
    c.duration_s = std::isfinite(time) && time > 0 ? time : 0;
    std::optional<SourceLocation> where;
    if (!failures.empty()) {
      c.status = CaseStatus::kFailed;
      c.message = gtest_message(failures.front().body);
      c.traceback = gtest_traceback(failures);
      where = gtest_location(ctx_, failures.front().path, failures.front().line);
    } else if (skip || std::string_view(tc.attribute("result").value()) == "skipped") {
      c.status = CaseStatus::kSkipped;
      if (skip) {
        c.message = gtest_message(skip->body);
        where = gtest_location(ctx_, skip->path, skip->line);
      }
    }
    if (!where) {
      where = gtest_location(ctx_, sanitize_text(tc.attribute("file").value()),
                             tc.attribute("line").as_int(0));
    }
    if (where) c.source = std::move(*where);
    out_.cases.push_back(std::move(c));
  }

  void environment(pugi::xml_node s) {
    std::vector<GtestPart> failures;
    for (pugi::xml_node tc : s.children("testcase")) {
      for (pugi::xml_node child : tc.children()) {
        std::string_view tag = child.name();
        if (tag == "failure" || tag == "error") failures.push_back(part_of(child));
      }
    }
    if (!failures.empty()) out_.cases.push_back(error_case({}, kGtestEnvironment, failures));
  }

  TestCase error_case(std::string_view suite, std::string_view name,
                      const std::vector<GtestPart>& failures) const {
    TestCase c;
    c.classname = sanitize_text(gtest_classname(ctx_, suite));
    c.name = std::string(name);
    c.status = CaseStatus::kError;
    c.message = gtest_message(failures.front().body);
    c.traceback = gtest_traceback(failures);
    if (auto loc = gtest_location(ctx_, failures.front().path, failures.front().line)) {
      c.source = std::move(*loc);
    }
    return c;
  }

  const GtestContext& ctx_;
  ParsedFile out_;
  int ran_ = 0, failures_ = 0, skipped_ = 0;
};

}  // namespace

std::optional<ParsedFile> parse_gtest_xml(const std::filesystem::path& xml,
                                          const GtestContext& ctx) {
  std::optional<std::string> data = read_file(xml);
  if (!data || blank(*data)) return std::nullopt;
  pugi::xml_document doc;
  if (!doc.load_buffer(data->data(), data->size())) return std::nullopt;
  pugi::xml_node root = doc.document_element();
  std::string_view tag = root.name();
  GtestXmlReader reader(ctx);
  if (tag == "testsuites") {
    for (pugi::xml_node s : root.children("testsuite")) reader.suite(s);
  } else if (tag == "testsuite") {
    reader.suite(root);
  } else {
    return std::nullopt;
  }
  return reader.finish();
}

ParsedFile parse_gtest_results(const std::filesystem::path& xml, const std::filesystem::path& log,
                               const GtestContext& ctx) {
  std::optional<ParsedFile> parsed = parse_gtest_xml(xml, ctx);
  if (!parsed) {
    LineReader lines(log);
    return parse_gtest_text(lines, ctx);
  }
  ParsedFile text;
  try {
    LineReader lines(log);
    text = parse_gtest_text(lines, ctx);
  } catch (const RuntimeError&) {
    return std::move(*parsed);  // the XML is complete; the log only refines it
  }
  // Failures outside test bodies: the console shows them all, and where they happened.
  const bool text_has_errors =
      std::any_of(text.cases.begin(), text.cases.end(),
                  [](const TestCase& c) { return c.status == CaseStatus::kError; });
  if (text_has_errors) {
    std::erase_if(parsed->cases, [](const TestCase& c) { return c.status == CaseStatus::kError; });
    for (TestCase& c : text.cases) {
      if (c.status == CaseStatus::kError) parsed->cases.push_back(std::move(c));
    }
  }
  if (text.reported.present) parsed->reported = text.reported;
  return std::move(*parsed);
}

}  // namespace devshim
