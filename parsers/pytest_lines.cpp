#include "parsers/pytest_lines.h"

#include <array>
#include <charconv>

#include "parsers/text.h"

namespace devshim::pytest_lines {

namespace {

struct VerdictWord {
  std::string_view word;
  CaseStatus status;
};
constexpr std::array<VerdictWord, 6> kVerdicts{{
    {"PASSED", CaseStatus::kPassed},
    {"FAILED", CaseStatus::kFailed},
    {"ERROR", CaseStatus::kError},
    {"SKIPPED", CaseStatus::kSkipped},
    {"XFAIL", CaseStatus::kXfailed},
    {"XPASS", CaseStatus::kXpassed},
}};

// "[ 50%]", "[100%]", "[ 3/30]" contents.
bool is_progress_column(std::string_view s) {
  s = trim(s);
  std::size_t i = 0;
  while (i < s.size() && is_digit(s[i])) ++i;
  if (i == 0) return false;
  std::string_view rest = s.substr(i);
  if (rest == "%") return true;
  if (rest.size() < 2 || rest[0] != '/') return false;
  for (char c : rest.substr(1)) {
    if (!is_digit(c)) return false;
  }
  return true;
}

}  // namespace

std::optional<CaseStatus> verdict_status(std::string_view word) {
  for (const auto& v : kVerdicts) {
    if (v.word == word) return v.status;
  }
  return std::nullopt;
}

std::optional<Verdict> trailing_verdict(std::string_view line) {
  Verdict v;
  std::string_view t = rtrim(line);
  if (t.ends_with(']')) {
    std::size_t lb = t.rfind('[');
    if (lb != std::string_view::npos && is_progress_column(t.substr(lb + 1, t.size() - lb - 2))) {
      v.progress = true;
      t = rtrim(t.substr(0, lb));
    }
  }
  if (t.ends_with(')')) {
    // "SKIPPED (reason)", "XFAIL (reason)", "XPASS (reason)": the first such word (a reason may
    // hold anything), not pytest 9's "SUBSKIPPED".
    std::size_t best = std::string_view::npos;
    for (const auto& w : {VerdictWord{"SKIPPED (", CaseStatus::kSkipped},
                          VerdictWord{"XFAIL (", CaseStatus::kXfailed},
                          VerdictWord{"XPASS (", CaseStatus::kXpassed}}) {
      for (std::size_t p = t.find(w.word); p != std::string_view::npos; p = t.find(w.word, p + 1)) {
        if (p >= 3 && t.substr(p - 3, 3) == "SUB") continue;
        if (p < best) {
          best = p;
          v.status = w.status;
          v.reason = t.substr(p + w.word.size(), t.size() - 1 - (p + w.word.size()));
          v.before = t.substr(0, p);
        }
        break;
      }
    }
    if (best == std::string_view::npos) return std::nullopt;
    return v;
  }
  for (const auto& w : kVerdicts) {
    if (t.ends_with(w.word)) {
      std::string_view before = t.substr(0, t.size() - w.word.size());
      if (before.ends_with("SUB")) return std::nullopt;
      v.status = w.status;
      v.before = before;
      return v;
    }
  }
  return std::nullopt;
}

std::size_t nodeid_end(std::string_view s, std::size_t from) {
  int depth = 0;
  for (std::size_t i = from; i < s.size(); ++i) {
    char c = s[i];
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      if (depth > 0) --depth;
    } else if (c == ' ' && depth == 0) {
      return i;
    }
  }
  return depth == 0 ? s.size() : std::string_view::npos;
}

std::optional<std::size_t> nodeid_start(std::string_view line) {
  if (line.empty() || line[0] == ' ' || line[0] == '\t') return std::nullopt;
  std::size_t p = line.find("::");
  if (p == std::string_view::npos || p == 0) return std::nullopt;
  std::string_view path = line.substr(0, p);
  if (path.find(' ') != std::string_view::npos || !path.ends_with(".py")) return std::nullopt;
  return p;
}

std::string head_line(std::string_view nodeid) {
  std::size_t br = nodeid.find('[');
  std::string_view base = nodeid.substr(0, br);
  std::string_view params = br == std::string_view::npos ? std::string_view{} : nodeid.substr(br);
  std::size_t p = base.find("::");
  if (p == std::string_view::npos) return std::string(nodeid);
  std::string out;
  std::string_view rest = base.substr(p + 2);
  for (std::size_t q = rest.find("::"); q != std::string_view::npos; q = rest.find("::")) {
    out.append(rest.substr(0, q));
    out.push_back('.');
    rest.remove_prefix(q + 2);
  }
  out.append(rest);
  out.append(params);
  return out;
}

std::string dotted_module(std::string_view path) {
  std::string out(path);
  for (char& c : out) {
    if (c == '/') c = '.';
  }
  if (out.ends_with(".py")) out.resize(out.size() - 3);
  return out;
}

bool parse_counts(std::string_view title, ReportedCounts& out) {
  std::size_t in = title.rfind(" in ");
  if (in == std::string_view::npos) return false;
  std::string_view timing = title.substr(in + 4);
  if (timing.empty() || !is_digit(timing[0])) return false;
  std::string_view items = title.substr(0, in);
  ReportedCounts c;
  c.ran = out.ran;
  c.present = true;
  if (items != "no tests ran") {
    while (!items.empty()) {
      std::size_t comma = items.find(", ");
      std::string_view item = items.substr(0, comma);
      items = comma == std::string_view::npos ? std::string_view{} : items.substr(comma + 2);
      int n = 0;
      auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
      if (ec != std::errc() || ptr == item.data() + item.size() || *ptr != ' ') return false;
      std::string_view word = item.substr(static_cast<std::size_t>(ptr - item.data()) + 1);
      if (word == "passed") {
        c.passed = n;
      } else if (word == "failed") {
        c.failed = n;
      } else if (word == "error" || word == "errors") {
        c.errors = n;
      } else if (word == "skipped") {
        c.skipped = n;
      } else if (word == "xfailed") {
        c.xfailed = n;
      } else if (word == "xpassed") {
        c.xpassed = n;
      }
      // warnings, deselected, rerun, "subtests passed": not test outcomes.
    }
  }
  out = c;
  return true;
}

std::optional<std::string_view> equals_title(std::string_view line) {
  if (line.size() < 3 || line.front() != '=' || line.back() != '=') return std::nullopt;
  std::size_t b = line.find_first_not_of('=');
  if (b == std::string_view::npos) return std::nullopt;
  std::size_t e = line.find_last_not_of('=');
  std::string_view t = trim(line.substr(b, e - b + 1));
  if (t.empty()) return std::nullopt;
  return t;
}

std::optional<std::string_view> block_title(std::string_view line) {
  if (line.size() < 5 || line.front() != '_' || line.back() != '_') return std::nullopt;
  std::size_t b = line.find_first_not_of('_');
  std::size_t e = line.find_last_not_of('_');
  if (b == std::string_view::npos || line[b] != ' ' || line[e] != ' ' || e <= b + 1) {
    return std::nullopt;
  }
  std::string_view title = line.substr(b + 1, e - b - 1);
  if (title.find_first_not_of("_ ") == std::string_view::npos) return std::nullopt;
  return title;
}

}  // namespace devshim::pytest_lines
