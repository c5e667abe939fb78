#include "parsers/gtest_text.h"

#include <array>
#include <charconv>
#include <deque>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "parsers/text.h"

namespace devshim {

namespace {

constexpr std::size_t kMaxMessageBytes = std::size_t{2} * 1024;
constexpr std::size_t kMaxTracebackBytes = std::size_t{64} * 1024;
constexpr std::size_t kMaxPartBytes = std::size_t{16} * 1024;  // one failure block's message
constexpr std::size_t kMaxParts = 100;                         // failure blocks kept per test
constexpr std::size_t kMaxLineBytes = 1024;                    // per line of an unfinished tail
constexpr std::size_t kUnfinishedTailLines = 60;

constexpr std::string_view kRun = "[ RUN      ] ";
constexpr std::string_view kOk = "[       OK ] ";
constexpr std::string_view kFailed = "[  FAILED  ] ";
constexpr std::string_view kSkipped = "[  SKIPPED ] ";
constexpr std::string_view kPassed = "[  PASSED  ] ";
constexpr std::string_view kRule = "[----------] ";
constexpr std::string_view kBanner = "[==========] ";

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

int to_int(std::string_view s) {
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// The leading count of "12 tests from 3 test suites ran." / "1 test." → 12 / 1; nullopt when the
// text does not start with a number followed by " test".
std::optional<int> leading_count(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == 0 || !s.substr(i).starts_with(" test")) return std::nullopt;
  return to_int(s.substr(0, i));
}

// "path:42" → {path, 42}; "unknown file" or a path without a line → {path, 0}.
GtestPart split_location(std::string_view loc) {
  GtestPart p;
  std::size_t colon = loc.rfind(':');
  if (colon != std::string_view::npos && colon > 0 && all_digits(loc.substr(colon + 1))) {
    p.path = std::string(loc.substr(0, colon));
    p.line = to_int(loc.substr(colon + 1));
  } else {
    p.path = std::string(loc);
  }
  return p;
}

// A console part header, "path:line: Failure" or "path:line: Skipped" (also "unknown file:
// Failure"), at the start of a line.
bool part_header(std::string_view line, GtestPart& part, bool& skip) {
  std::string_view loc;
  if (line.ends_with(": Failure")) {
    loc = line.substr(0, line.size() - 9);
    skip = false;
  } else if (line.ends_with(": Skipped")) {
    loc = line.substr(0, line.size() - 9);
    skip = true;
  } else {
    return false;
  }
  if (loc.empty() || loc.front() == ' ' || loc.front() == '[') return false;
  if (loc != "unknown file") {
    std::size_t colon = loc.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || !all_digits(loc.substr(colon + 1))) {
      return false;
    }
  }
  part = split_location(loc);
  return true;
}

void append_line(std::string& text, std::string_view line, std::size_t cap) {
  if (text.size() >= cap) return;
  if (!text.empty()) text += '\n';
  text.append(cut_utf8(line, cap - std::min(cap, text.size())));
}

// "Suite.Name, where GetParam() = 1 (3 ms)" → full name "Suite.Name" and 0.003 s.
struct Verdict {
  std::string_view full;
  double duration_s = 0;
};
Verdict read_verdict(std::string_view rest) {
  Verdict v;
  std::size_t end = rest.find_first_of(", ");
  v.full = rest.substr(0, end);
  rest = trim(rest);
  if (rest.ends_with(" ms)")) {
    std::size_t open = rest.rfind('(');
    if (open != std::string_view::npos) {
      std::string_view n = rest.substr(open + 1, rest.size() - open - 5);
      if (all_digits(n)) v.duration_s = to_int(n) / 1000.0;
    }
  }
  return v;
}

// "[----------] 3 tests from Suite, where TypeParam = int" (header) or "[----------] 3 tests
// from Suite (12 ms total)" (footer) → the suite's name; empty when the line is neither.
std::string_view suite_of_rule(std::string_view rest, bool& footer) {
  if (!leading_count(rest)) return {};
  std::size_t from = rest.find(" from ");
  if (from == std::string_view::npos) return {};
  std::string_view tail = rest.substr(from + 6);
  footer = tail.ends_with(" ms total)");
  return tail.substr(0, tail.find_first_of(", "));
}

// The test between its "[ RUN      ]" line and its verdict.
struct Running {
  std::string suite, name, full;
  std::vector<GtestPart> failures;
  std::optional<GtestPart> skip;
  GtestPart* open = nullptr;  // the block output lines go to
  std::deque<std::string> tail;
};

// Failure blocks printed outside any test, and where.
struct FixtureFailure {
  std::string suite;  // empty: the global environment
  std::string name;
  std::vector<GtestPart> parts;
};

class GtestTextParser {
 public:
  explicit GtestTextParser(const GtestContext& ctx) : ctx_(ctx) {}

  void line(std::string_view l) {
    if (running_) {
      running_line(l);
      return;
    }
    if (l.starts_with(kRun) && where_ != Where::kSummary) {
      if (std::string_view full = trim(l.substr(kRun.size())); !full.empty()) start_test(full);
      return;
    }
    if (where_ == Where::kSummary) {
      summary_line(l);
      return;
    }
    if (where_ == Where::kSuite && !cases_.empty() && last_from_suite_ &&
        reverdict(l, cases_.back())) {
      pending_.clear();  // what came between were the test's own output
      return;
    }
    if (l.starts_with(kRule)) {
      rule(l.substr(kRule.size()));
      return;
    }
    if (l.starts_with(kBanner)) {
      std::string_view rest = l.substr(kBanner.size());
      if (auto n = leading_count(rest); n && rest.find(" ran.") != std::string_view::npos) {
        if (where_ == Where::kEnvTearDown) add_environment(kGtestEnvironmentTearDown);
        if (where_ == Where::kEnvSetUp) add_environment(kGtestEnvironmentSetUp);
        pending_.clear();
        reported_.present = true;
        reported_.ran = *n;
        where_ = Where::kSummary;
      }
      return;
    }
    GtestPart part;
    bool skip = false;
    if (part_header(l, part, skip)) {
      if (pending_.size() < kMaxParts) pending_.push_back(std::move(part));
      return;
    }
    if (!pending_.empty()) append_line(pending_.back().body, l, kMaxPartBytes);
  }

  ParsedFile finish() {
    ParsedFile out;
    if (running_) {
      TestCase c = make_case(*running_, CaseStatus::kError);
      c.message.clear();
      std::string text;
      for (const std::string& t : running_->tail) append_line(text, t, kMaxTracebackBytes);
      c.traceback = std::move(text);
      out.unfinished = std::move(c);
    }
    out.cases = std::move(cases_);
    std::set<std::string> covered;
    for (FixtureFailure& f : fixtures_) {
      if (!f.suite.empty() && summary_seen_ && failed_suites_.count(f.suite) == 0) continue;
      covered.insert(f.suite);
      out.cases.push_back(fixture_case(f.suite, f.name, f.parts));
    }
    for (const std::string& suite : failed_suites_) {  // listed, but no failure text was seen
      if (covered.count(suite) == 0) {
        out.cases.push_back(fixture_case(suite, std::string(kGtestSuiteFixture), {}));
      }
    }
    out.reported = reported_;
    return out;
  }

 private:
  enum class Where { kStart, kEnvSetUp, kSuite, kBetween, kEnvTearDown, kSummary };

  void start_test(std::string_view full) {
    if (where_ == Where::kSuite && !suite_started_) {
      if (!pending_.empty()) add_fixture(suite_, kGtestSetUpTestSuite);
    }
    pending_.clear();
    suite_started_ = true;
    running_.emplace();
    running_->full = std::string(full);
    std::size_t dot = full.find('.');
    running_->suite =
        std::string(dot == std::string_view::npos ? std::string_view{} : full.substr(0, dot));
    running_->name = std::string(dot == std::string_view::npos ? full : full.substr(dot + 1));
    if (running_->suite.empty() && !suite_.empty()) running_->suite = suite_;
  }

  // A verdict for the running test, possibly after output printed without a newline.
  bool verdict_in(std::string_view l, const std::string& full, CaseStatus& status, Verdict& v,
                  std::string_view& before) const {
    static constexpr std::array<std::pair<std::string_view, CaseStatus>, 3> kVerdicts{{
        {kOk, CaseStatus::kPassed},
        {kFailed, CaseStatus::kFailed},
        {kSkipped, CaseStatus::kSkipped},
    }};
    for (const auto& [marker, s] : kVerdicts) {
      std::size_t pos = l.starts_with(marker) ? 0 : l.rfind(marker);
      if (pos == std::string_view::npos) continue;
      Verdict candidate = read_verdict(l.substr(pos + marker.size()));
      if (candidate.full != full) continue;
      status = s;
      v = candidate;
      before = l.substr(0, pos);
      return true;
    }
    return false;
  }

  void running_line(std::string_view l) {
    CaseStatus status;
    Verdict v;
    std::string_view before;
    if (verdict_in(l, running_->full, status, v, before)) {
      if (!before.empty()) output(before);
      TestCase c = make_case(*running_, status);
      c.duration_s = v.duration_s;
      cases_.push_back(std::move(c));
      last_from_suite_ = true;
      running_.reset();
      return;
    }
    GtestPart part;
    bool skip = false;
    if (part_header(l, part, skip)) {
      if (skip) {
        running_->skip = std::move(part);
        running_->open = &*running_->skip;
      } else if (running_->failures.size() < kMaxParts) {
        running_->failures.push_back(std::move(part));
        running_->open = &running_->failures.back();
      } else {
        running_->open = nullptr;
      }
      keep_tail(l);
      return;
    }
    output(l);
  }

  void output(std::string_view l) {
    if (running_->open != nullptr) append_line(running_->open->body, l, kMaxPartBytes);
    keep_tail(l);
  }

  void keep_tail(std::string_view l) {
    running_->tail.emplace_back(cut_utf8(l, kMaxLineBytes));
    if (running_->tail.size() > kUnfinishedTailLines) running_->tail.pop_front();
  }

  // The test that just ended printed a verdict of its own before GoogleTest's: the later wins.
  bool reverdict(std::string_view l, TestCase& last) {
    std::string full = last_full_;
    CaseStatus status;
    Verdict v;
    std::string_view before;
    if (!verdict_in(l, full, status, v, before)) return false;
    last.status = status;
    last.duration_s = v.duration_s;
    if (status == CaseStatus::kPassed) {
      last.message.clear();
      last.traceback.clear();
      last.source = {};
    } else if (status == CaseStatus::kFailed && last.traceback.empty() && !pending_.empty()) {
      // Its failures were printed after the fake verdict.
      last.message = sanitize_text(gtest_message(pending_.front().body));
      last.traceback = sanitize_text(gtest_traceback(pending_));
      if (auto loc = gtest_location(ctx_, pending_.front().path, pending_.front().line)) {
        last.source = std::move(*loc);
      }
    }
    return true;
  }

  void rule(std::string_view rest) {
    if (rest.starts_with("Global test environment set-up")) {
      pending_.clear();
      where_ = Where::kEnvSetUp;
      return;
    }
    if (rest.starts_with("Global test environment tear-down")) {
      pending_.clear();
      where_ = Where::kEnvTearDown;
      return;
    }
    bool footer = false;
    std::string_view suite = suite_of_rule(rest, footer);
    if (suite.empty()) return;
    if (footer) {
      if (where_ == Where::kSuite && suite == suite_ && !pending_.empty()) {
        add_fixture(suite_, kGtestTearDownTestSuite);
      }
      pending_.clear();
      where_ = Where::kBetween;
      last_from_suite_ = false;
      return;
    }
    if (where_ == Where::kEnvSetUp && !pending_.empty()) add_environment(kGtestEnvironmentSetUp);
    pending_.clear();
    where_ = Where::kSuite;
    suite_ = std::string(suite);
    suite_started_ = false;
    last_from_suite_ = false;
  }

  void summary_line(std::string_view l) {
    if (l.starts_with(kPassed)) {
      if (auto n = leading_count(l.substr(kPassed.size()))) reported_.passed = *n;
    } else if (l.starts_with(kFailed)) {
      std::string_view rest = l.substr(kFailed.size());
      if (auto n = leading_count(rest); n && rest.ends_with("listed below:")) {
        reported_.failed = *n;
      } else if (rest.ends_with(": SetUpTestSuite or TearDownTestSuite")) {
        failed_suites_.insert(std::string(rest.substr(0, rest.find(':'))));
      }
    } else if (l.starts_with(kSkipped)) {
      std::string_view rest = l.substr(kSkipped.size());
      if (auto n = leading_count(rest); n && rest.ends_with("listed below:")) {
        reported_.skipped = *n;
      }
    } else {
      std::string_view t = trim(l);
      if (t.ends_with(" FAILED TEST SUITES") || t.ends_with(" FAILED TEST SUITE")) {
        std::string_view n = t.substr(0, t.find(' '));
        if (all_digits(n)) reported_.errors = to_int(n);
      }
    }
    summary_seen_ = true;
  }

  void add_fixture(const std::string& suite, std::string_view name) {
    fixtures_.push_back({suite, std::string(name), std::move(pending_)});
    pending_.clear();
  }
  void add_environment(std::string_view name) {
    if (pending_.empty()) return;
    fixtures_.push_back({"", std::string(name), std::move(pending_)});
    pending_.clear();
  }

  TestCase make_case(const Running& r, CaseStatus status) {
    TestCase c;
    c.classname = sanitize_text(gtest_classname(ctx_, r.suite));
    c.name = sanitize_text(r.name);
    c.status = status;
    last_full_ = r.full;
    const GtestPart* where = nullptr;
    if (!r.failures.empty()) {
      where = &r.failures.front();
      c.message = sanitize_text(gtest_message(r.failures.front().body));
      c.traceback = sanitize_text(gtest_traceback(r.failures));
    } else if (r.skip) {
      where = &*r.skip;
      c.message = sanitize_text(gtest_message(r.skip->body));
    }
    if (status == CaseStatus::kPassed) {
      c.message.clear();
      c.traceback.clear();
      where = nullptr;
    }
    if (where != nullptr) {
      if (auto loc = gtest_location(ctx_, where->path, where->line)) c.source = std::move(*loc);
    }
    return c;
  }

  TestCase fixture_case(const std::string& suite, const std::string& name,
                        const std::vector<GtestPart>& parts) {
    TestCase c;
    c.classname =
        sanitize_text(suite.empty() ? ctx_.classname_prefix : gtest_classname(ctx_, suite));
    c.name = name;
    c.status = CaseStatus::kError;
    if (!parts.empty()) {
      c.message = sanitize_text(gtest_message(parts.front().body));
      c.traceback = sanitize_text(gtest_traceback(parts));
      if (auto loc = gtest_location(ctx_, parts.front().path, parts.front().line)) {
        c.source = std::move(*loc);
      }
    }
    return c;
  }

  const GtestContext& ctx_;
  Where where_ = Where::kStart;
  std::string suite_;           // the suite whose header was seen last
  bool suite_started_ = false;  // a test of suite_ has started
  bool last_from_suite_ = false;
  std::string last_full_;  // full name of the test that ended last
  std::optional<Running> running_;
  std::vector<GtestPart> pending_;  // failure blocks printed outside a test
  std::vector<TestCase> cases_;
  std::vector<FixtureFailure> fixtures_;
  std::set<std::string> failed_suites_;  // listed by the summary
  bool summary_seen_ = false;
  ReportedCounts reported_;
};

}  // namespace

std::string gtest_classname(const GtestContext& ctx, std::string_view suite) {
  if (ctx.classname_prefix.empty()) return std::string(suite);
  if (suite.empty()) return ctx.classname_prefix;
  std::string out = ctx.classname_prefix;
  out += '.';
  out += suite;
  return out;
}

std::optional<SourceLocation> gtest_location(const GtestContext& ctx, std::string_view path,
                                             int line) {
  if (path.empty() || path == "unknown file") return std::nullopt;
  namespace fs = std::filesystem;
  SourceLocation loc{sanitize_text(path), line > 0 ? line : 0};
  fs::path p(loc.path);
  if (!ctx.project_root.empty() && p.is_absolute()) {
    fs::path rel = p.lexically_normal().lexically_relative(fs::path(ctx.project_root));
    std::string r = rel.generic_string();
    if (!r.empty() && r != "." && !r.starts_with("..")) loc.path = r;
  }
  return loc;
}

GtestPart split_gtest_part(std::string_view text) {
  std::size_t nl = text.find('\n');
  GtestPart p = split_location(trim(text.substr(0, nl)));
  if (nl != std::string_view::npos) p.body = std::string(text.substr(nl + 1));
  while (!p.body.empty() && (p.body.back() == '\n' || p.body.back() == '\r')) p.body.pop_back();
  return p;
}

std::string gtest_message(std::string_view body) {
  // The lines of body, without their ending.
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos <= body.size() && lines.size() < 1000;) {
    std::size_t nl = body.find('\n', pos);
    if (nl == std::string_view::npos) nl = body.size();
    lines.push_back(body.substr(pos, nl - pos));
    pos = nl + 1;
  }
  std::size_t i = 0;
  while (i < lines.size() && trim(lines[i]).empty()) ++i;
  // FAIL() / ADD_FAILURE() print "Failed", then the user's message.
  if (i + 1 < lines.size() && trim(lines[i]) == "Failed") ++i;
  if (i >= lines.size()) return "";
  std::string out(trim(lines[i]));
  // "Expected equality of these values:" and other headers ending in ':' are followed by
  // indented lines that say what was compared.
  if (out.ends_with(':')) {
    for (++i; i < lines.size() && out.size() < kMaxMessageBytes; ++i) {
      std::string_view l = lines[i];
      if (l.empty() || (l.front() != ' ' && l.front() != '\t')) break;
      out += ' ';
      out += trim(l);
    }
  }
  std::string clean;
  for (char c : out) {
    if (c == '\t') c = ' ';
    if (c == ' ' && !clean.empty() && clean.back() == ' ') continue;
    clean += c;
  }
  return std::string(cut_utf8(clean, kMaxMessageBytes));
}

std::string gtest_traceback(const std::vector<GtestPart>& parts, bool skip) {
  std::string out;
  for (const GtestPart& p : parts) {
    std::string header = p.path;
    if (p.line > 0) header += ':' + std::to_string(p.line);
    header += skip ? ": Skipped" : ": Failure";
    append_line(out, header, kMaxTracebackBytes);
    std::size_t pos = 0;
    while (pos < p.body.size() && out.size() < kMaxTracebackBytes) {
      std::size_t nl = p.body.find('\n', pos);
      std::string_view line = std::string_view(p.body).substr(
          pos, nl == std::string::npos ? std::string::npos : nl - pos);
      append_line(out, line, kMaxTracebackBytes);
      pos = nl == std::string::npos ? p.body.size() : nl + 1;
    }
  }
  return out;
}

ParsedFile parse_gtest_text(LineReader& lines, const GtestContext& ctx) {
  GtestTextParser parser(ctx);
  std::string_view line;
  while (lines.next(line)) parser.line(line);
  return parser.finish();
}

}  // namespace devshim
