#include "parsers/unittest_parser.h"

#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "parsers/text.h"
#include "parsers/traceback.h"

namespace devshim {

namespace {

constexpr std::size_t kMaxTracebackBytes = std::size_t{64} * 1024;
constexpr std::size_t kMaxMessageBytes = std::size_t{2} * 1024;
constexpr std::size_t kUnfinishedTailLines = 60;

bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
// A character of an identifier, a non-ASCII one's UTF-8 bytes included.
bool is_ident(char c) { return is_identifier_char(c) || static_cast<unsigned char>(c) >= 0x80; }
bool is_rule(std::string_view line, char c) {
  if (line.size() < 60) return false;
  for (char x : line) {
    if (x != c) return false;
  }
  return true;
}

// "name (dotted)[ (params)]" at the start of s (after indentation).
// Views into the line being parsed; copied into a Pending or a TestCase when kept.
struct Description {
  std::string_view name;
  std::string_view classname;
  std::string_view params;  // "(i=1)" for subtests, else empty
  std::string_view rest;    // what follows the description ("" or " ... ...")
  bool valid = false;
};

std::string case_name(std::string_view name, std::string_view params) {
  std::string s(name);
  if (!params.empty()) s.append(1, ' ').append(params);
  return s;
}

// The rest of a description line after its "(dotted)": "", " ...", or a subtest's parameters up to
// " ..." or the end. Sets d.params and d.rest and returns true when it is one of those.
bool parse_description_rest(std::string_view rest, Description& d) {
  // A subtest's description: " (i=1)", " [message]" or " [message] (i=1)", up to the " ..."
  // or the end of the line.
  if (rest.starts_with(" (") || rest.starts_with(" [")) {
    const char close = rest[1] == '(' ? ')' : ']';
    std::size_t dots = rest.find(" ...");
    std::string_view params =
        rest.substr(1, dots == std::string_view::npos ? std::string_view::npos : dots - 1);
    if (params.empty() || (params.back() != ')' && params.back() != ']') ||
        (close == ')' && params.back() != ')')) {
      return false;
    }
    d.params = params;
    rest = dots == std::string_view::npos ? std::string_view() : rest.substr(dots);
  }
  if (!rest.empty() && !rest.starts_with(" ...")) return false;
  d.rest = rest;
  return true;
}

// "pkg.mod.Class" or "pkg.mod.Class.test_x": a module path, then identifiers. The module path is
// free-form (a file named "test odd 'name'.py" makes the module "test odd 'name'"), but the text
// ends with ".Identifier" and holds no line control characters.
bool plausible_dotted(std::string_view dotted) {
  const auto last_dot = dotted.rfind('.');
  if (last_dot == std::string_view::npos || last_dot == 0 || last_dot + 1 == dotted.size()) {
    return false;
  }
  for (std::size_t k = last_dot + 1; k < dotted.size(); ++k) {
    if (!is_ident(dotted[k])) return false;
  }
  for (char c : dotted) {
    if (c == '\t' || c == '\r' || c == '\0') return false;
  }
  return true;
}

// "name (dotted)[ (params)]" at the start of s (after indentation). Python identifiers may be
// non-ASCII: bytes >= 0x80 count as identifier characters.
Description parse_description(std::string_view s) {
  Description d;
  std::size_t i = 0;
  while (i < s.size() && is_ident(s[i])) ++i;
  if (i == 0 || i + 2 >= s.size() || s[i] != ' ' || s[i + 1] != '(') return d;
  std::string_view name = s.substr(0, i);
  const std::size_t start = i + 2;
  // The dotted id ends at the first ')' after which the line reads as a description's end.
  for (std::size_t j = s.find(')', start); j != std::string_view::npos; j = s.find(')', j + 1)) {
    std::string_view dotted = s.substr(start, j - start);
    if (!plausible_dotted(dotted) || !parse_description_rest(s.substr(j + 1), d)) continue;
    d.name = name;
    // Python 3.11+: "test_x (pkg.mod.Class.test_x)"; older: "test_x (pkg.mod.Class)".
    if (ends_with(dotted, name) && dotted.size() > name.size() &&
        dotted[dotted.size() - name.size() - 1] == '.') {
      dotted.remove_suffix(name.size() + 1);
    }
    d.classname = dotted;
    d.valid = true;
    return d;
  }
  d.params = {};
  return d;
}

// A verdict as printed after " ... " (or alone on a line).
std::optional<CaseStatus> parse_verdict(std::string_view v, std::string* reason) {
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v == "ok") return CaseStatus::kPassed;
  if (v == "FAIL") return CaseStatus::kFailed;
  if (v == "ERROR") return CaseStatus::kError;
  if (v == "expected failure") return CaseStatus::kXfailed;
  if (v == "unexpected success") return CaseStatus::kXpassed;
  if (v == "skipped" || v.starts_with("skipped '") || v.starts_with("skipped \"")) {
    if (reason != nullptr && v.size() > 9) {
      std::string_view r = v.substr(8);
      if (r.size() >= 2 && (r.back() == '\'' || r.back() == '"')) r = r.substr(1, r.size() - 2);
      *reason = std::string(r);
    }
    return CaseStatus::kSkipped;
  }
  return std::nullopt;
}

// A verdict glued to the end of output printed without a newline ("partial outputok").
std::optional<CaseStatus> trailing_verdict(std::string_view line) {
  for (auto [word, status] :
       {std::pair{"ok", CaseStatus::kPassed}, std::pair{"FAIL", CaseStatus::kFailed},
        std::pair{"ERROR", CaseStatus::kError}, std::pair{"expected failure", CaseStatus::kXfailed},
        std::pair{"unexpected success", CaseStatus::kXpassed}}) {
    if (ends_with(line, word)) return status;
  }
  return std::nullopt;
}

void parse_counts(std::string_view s, ReportedCounts& r) {
  // "(failures=1, errors=2, skipped=3, expected failures=4, unexpected successes=5)"
  auto open = s.find('(');
  if (open == std::string_view::npos) return;
  s = s.substr(open + 1);
  while (!s.empty()) {
    auto eq = s.find('=');
    if (eq == std::string_view::npos) break;
    std::string_view key = s.substr(0, eq);
    while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
    s = s.substr(eq + 1);
    int n = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc()) break;
    s = s.substr(static_cast<std::size_t>(p - s.data()));
    if (key == "failures") r.failed = n;
    if (key == "errors") r.errors = n;
    if (key == "skipped") r.skipped = n;
    if (key == "expected failures") r.xfailed = n;
    if (key == "unexpected successes") r.xpassed = n;
    auto comma = s.find(',');
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
}

void append_capped(std::string& out, std::string_view line, std::size_t cap) {
  if (out.size() >= cap) return;
  out.append(line.substr(0, cap - out.size()));
  out.push_back('\n');
}

class UnittestParser {
 public:
  explicit UnittestParser(std::string_view test_file) : test_file_(test_file) {}

  ParsedFile run(LineReader& lines) {
    std::string_view line;
    while (lines.next(line)) feed(line);
    finish();
    return std::move(out_);
  }

 private:
  enum class Phase { kProgress, kBlockHeader, kBlockDoc, kBlockBody, kSummary };

  // The test whose verdict is awaited. Reused from test to test (no allocation per test).
  struct Pending {
    bool active = false;
    std::string name, classname;
    bool awaiting_docstring = false;
    bool has_subtests = false;
    std::vector<std::string> tail;  // ring of the last output lines, for a crash culprit
    std::size_t tail_next = 0;
    std::string last_line;

    void start(const Description& d) {
      active = true;
      name.assign(d.name);
      classname.assign(d.classname);
      awaiting_docstring = false;
      has_subtests = false;
      tail.clear();
      tail_next = 0;
      last_line.clear();
    }
    Description desc() const {
      Description d;
      d.name = name;
      d.classname = classname;
      d.valid = true;
      return d;
    }
  };

  static bool same_test(const TestCase& c, const Description& d) {
    const std::string& n = c.name;
    if (n.size() < d.name.size() || n.compare(0, d.name.size(), d.name) != 0) return false;
    if (d.params.empty()) {
      if (n.size() != d.name.size()) return false;
    } else if (n.size() != d.name.size() + 1 + d.params.size() || n[d.name.size()] != ' ' ||
               n.compare(d.name.size() + 1, d.params.size(), d.params) != 0) {
      return false;
    }
    return c.classname == d.classname;
  }

  // The case for d, found by a scan that resumes where the last one stopped (blocks come in
  // the order their tests ran, so the scans add up to O(cases)); created when absent.
  std::size_t case_for(const Description& d, CaseStatus status) {
    const std::size_t n = out_.cases.size();
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (cursor_ + k) % n;
      if (same_test(out_.cases[i], d)) {
        cursor_ = i + 1;
        return i;
      }
    }
    return add_case(d, status);
  }

  std::size_t add_case(const Description& d, CaseStatus status) {
    TestCase c;
    c.classname.assign(d.classname);
    c.name = case_name(d.name, d.params);
    c.status = status;
    out_.cases.push_back(std::move(c));
    return out_.cases.size() - 1;
  }

  // A verdict from the progress lines: each is a new case (a test is reported once).
  void record(const Description& d, CaseStatus status, std::string reason) {
    std::size_t i = add_case(d, status);
    if (!reason.empty()) out_.cases[i].message = std::move(reason);
    last_verdict_ = i;
  }

  // A test may print a line that reads like a verdict ("FAIL") before its real one. The real
  // verdict is the last one before the next test starts: a later non-failure verdict replaces
  // an earlier FAIL/ERROR (a later FAIL/ERROR is not taken: it may be a class fixture's bare
  // "ERROR", and the FAIL/ERROR blocks at the end settle those cases anyway).
  bool revise_last_verdict(std::string_view line) {
    if (!last_verdict_) return false;
    std::string reason;
    auto v = parse_verdict(line, &reason);
    if (!v || *v == CaseStatus::kFailed || *v == CaseStatus::kError) return false;
    TestCase& c = out_.cases[*last_verdict_];
    if (c.status != CaseStatus::kFailed && c.status != CaseStatus::kError) return false;
    c.status = *v;
    c.message = std::move(reason);
    return true;
  }

  // Closes the pending test when something else starts.
  void close_pending() {
    if (!pending_.active) return;
    if (!pending_.has_subtests) {
      if (auto v = trailing_verdict(pending_.last_line)) record(pending_.desc(), *v, "");
    }
    pending_.active = false;
  }

  void take_verdict_text(std::string_view after_dots) {
    // after_dots: text after " ..." (may start with a space)
    if (!after_dots.empty() && after_dots.front() == ' ') after_dots.remove_prefix(1);
    std::string reason;
    if (auto v = parse_verdict(after_dots, &reason)) {
      record(pending_.desc(), *v, std::move(reason));
      pending_.active = false;
      return;
    }
    // Python <= 3.10 prints no verdict for a test whose subtests failed, so the next test's
    // description follows on the same line; the FAIL/ERROR blocks name the subtests.
    if (parse_description(after_dots).valid) {
      pending_.has_subtests = true;
      progress_line(after_dots);
      return;
    }
    if (!after_dots.empty()) note_output(after_dots);
  }

  void note_output(std::string_view line) {
    pending_.last_line.assign(line.substr(0, 256));
    if (pending_.tail.size() < kUnfinishedTailLines) {
      pending_.tail.emplace_back(line.substr(0, 1024));
    } else {
      pending_.tail[pending_.tail_next].assign(line.substr(0, 1024));
      pending_.tail_next = (pending_.tail_next + 1) % kUnfinishedTailLines;
    }
  }

  // The tail lines in the order they were printed.
  std::string tail_text() const {
    std::string text;
    const std::size_t n = pending_.tail.size();
    for (std::size_t k = 0; k < n; ++k) {
      append_capped(text, pending_.tail[(pending_.tail_next + k) % n], kMaxTracebackBytes);
    }
    return text;
  }

  void progress_line(std::string_view line) {
    std::size_t indent = 0;
    while (indent < line.size() && line[indent] == ' ') ++indent;
    Description d = parse_description(line.substr(indent));
    if (d.valid) {
      if (indent > 0 && !d.params.empty() && pending_.active && pending_.name == d.name &&
          pending_.classname == d.classname) {
        // A subtest of the pending test: "  test_x (m.C.test_x) (i=1) ... FAIL".
        pending_.has_subtests = true;
        std::string reason;
        std::string_view v = d.rest.substr(std::min<std::size_t>(d.rest.size(), 4));
        if (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        if (auto s = parse_verdict(v, &reason)) record(d, *s, std::move(reason));
        return;
      }
      close_pending();
      last_verdict_.reset();
      pending_.start(d);
      if (d.rest.empty()) {
        pending_.awaiting_docstring = true;
        return;
      }
      take_verdict_text(d.rest.substr(4));
      return;
    }
    if (!pending_.active) {  // a bare "ERROR" of a class fixture, a revised verdict, or output
      revise_last_verdict(line);
      return;
    }
    if (pending_.awaiting_docstring) {
      pending_.awaiting_docstring = false;
      auto dots = line.rfind(" ...");
      if (dots != std::string_view::npos) {
        take_verdict_text(line.substr(dots + 4));
        return;
      }
    }
    std::string reason;
    if (auto v = parse_verdict(line, &reason)) {
      record(pending_.desc(), *v, std::move(reason));
      pending_.active = false;
      return;
    }
    note_output(line);
  }

  void start_block(std::string_view header) {
    block_.reset();
    CaseStatus status = CaseStatus::kError;
    std::string_view desc;
    if (header.starts_with("FAIL: ")) {
      status = CaseStatus::kFailed;
      desc = header.substr(6);
    } else if (header.starts_with("ERROR: ")) {
      desc = header.substr(7);
    } else if (header.starts_with("UNEXPECTED SUCCESS: ")) {
      status = CaseStatus::kXpassed;
      desc = header.substr(20);
    } else {
      return;
    }
    Description d = parse_description(desc);
    if (!d.valid) return;
    if (d.classname == "unittest.loader._FailedTest" ||
        d.classname == "unittest.loader.ModuleImportFailure") {
      out_.import_error = true;
    }
    // The block's kind is authoritative: it is how unittest itself classified the test.
    std::size_t i = case_for(d, status);
    out_.cases[i].status = status;
    block_ = i;
    block_text_.clear();
  }

  void end_block() {
    if (!block_) return;
    TestCase& c = out_.cases[*block_];
    while (!block_text_.empty() && (block_text_.back() == '\n')) block_text_.pop_back();
    ParsedTraceback tb = parse_traceback(block_text_);
    c.exception = tb.exception;
    if (!tb.message.empty() || c.message.empty())
      c.message = tb.message.substr(0, kMaxMessageBytes);
    if (auto loc = location_in_file(tb, test_file_)) c.source = *loc;
    if (out_.import_error && c.classname.rfind("unittest.loader.", 0) == 0) {
      out_.import_error_text = block_text_;
    }
    c.traceback = std::move(block_text_);
    block_text_.clear();
    block_.reset();
  }

  void feed(std::string_view line) {
    switch (phase_) {
      case Phase::kProgress:
        if (is_rule(line, '=')) {
          close_pending();
          phase_ = Phase::kBlockHeader;
          return;
        }
        if (is_rule(line, '-')) {  // no failures: straight to "Ran N tests"
          close_pending();
          phase_ = Phase::kSummary;
          return;
        }
        if (line.starts_with("Ran ") && !pending_.active) {
          summary_line(line);
          return;
        }
        progress_line(line);
        return;
      case Phase::kBlockHeader:
        start_block(line);
        phase_ = Phase::kBlockDoc;
        return;
      case Phase::kBlockDoc:
        if (is_rule(line, '-')) {
          // An UNEXPECTED SUCCESS block has no traceback: its rule closes the blocks section.
          if (block_ && out_.cases[*block_].status == CaseStatus::kXpassed) {
            end_block();
            phase_ = Phase::kSummary;
            return;
          }
          phase_ = Phase::kBlockBody;
        } else if (is_rule(line, '=')) {  // UNEXPECTED SUCCESS blocks have no body
          end_block();
          phase_ = Phase::kBlockHeader;
        }
        return;
      case Phase::kBlockBody:
        if (is_rule(line, '=')) {
          end_block();
          phase_ = Phase::kBlockHeader;
          return;
        }
        if (is_rule(line, '-')) {
          end_block();
          phase_ = Phase::kSummary;
          return;
        }
        append_capped(block_text_, line, kMaxTracebackBytes);
        return;
      case Phase::kSummary:
        summary_line(line);
        return;
    }
  }

  void summary_line(std::string_view line) {
    if (line.starts_with("Ran ")) {
      int n = 0;
      std::string_view s = line.substr(4);
      if (std::from_chars(s.data(), s.data() + s.size(), n).ec == std::errc()) {
        out_.reported.ran = n;
        out_.reported.present = true;
      }
    } else if (line.starts_with("FAILED") || line.starts_with("OK")) {
      parse_counts(line, out_.reported);
    } else if (line.starts_with("NO TESTS RAN")) {
      out_.reported.ran = 0;
      out_.reported.present = true;
    }
  }

  void finish() {
    if (phase_ == Phase::kBlockBody || phase_ == Phase::kBlockDoc) end_block();
    if (pending_.active) {
      TestCase c;
      c.classname = pending_.classname;
      c.name = pending_.name;
      c.status = CaseStatus::kError;
      c.traceback = tail_text();
      ParsedTraceback tb = parse_traceback(c.traceback);
      c.exception = tb.exception;
      c.message = tb.message;
      if (auto loc = location_in_file(tb, test_file_)) c.source = *loc;
      out_.unfinished = std::move(c);
      pending_.active = false;
    }
    if (out_.reported.present) {
      // unittest prints no count of passes (and "Ran N" counts differently across versions and
      // with subtests and fixture errors): passed is the number of passing cases.
      out_.reported.passed = 0;
      for (const TestCase& c : out_.cases) {
        out_.reported.passed += c.status == CaseStatus::kPassed ? 1 : 0;
      }
    }
  }

  std::string_view test_file_;
  ParsedFile out_;
  Phase phase_ = Phase::kProgress;
  Pending pending_;
  std::optional<std::size_t> last_verdict_;  // case of the last progress verdict
  std::size_t cursor_ = 0;                   // where case_for's next scan starts
  std::optional<std::size_t> block_;
  std::string block_text_;
};

}  // namespace

ParsedFile parse_unittest_log(LineReader& lines, std::string_view test_file) {
  return UnittestParser(test_file).run(lines);
}

}  // namespace devshim
