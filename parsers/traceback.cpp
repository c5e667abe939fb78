#include "parsers/traceback.h"

#include <algorithm>
#include <charconv>
#include <fstream>

#include "parsers/python_source.h"
#include "parsers/text.h"

namespace devshim {

namespace {

bool ends_with_str(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// "pkg.ExcType: message" / "ExcType" → exception line? A dotted identifier at column 0.
bool split_exception_line(std::string_view line, std::string& exc, std::string& msg) {
  if (line.empty() || line[0] == ' ' || line[0] == '\t') return false;
  std::size_t i = 0;
  while (i < line.size() && (is_identifier_char(line[i]) || line[i] == '.')) ++i;
  if (i == 0 || line[0] == '.' || (line[0] >= '0' && line[0] <= '9')) return false;
  std::string_view name = line.substr(0, i);
  if (i == line.size()) {
    exc = std::string(name);
    msg.clear();
    return true;
  }
  if (line[i] != ':') return false;
  exc = std::string(name);
  msg = std::string(trim(line.substr(i + 1)));
  return true;
}

// pytest's --tb=long/short text: sections separated by "_ _ _" lines. A long section lists its
// frame's source from the frame's first line: a function's from its decorators or `def`, a
// module's from its first line, so a `def` names the frame's function only when the section's
// source begins with it (a module-level frame is `<module>`, whatever it defines above the line).
std::vector<TracebackFrame> pytest_frames(std::string_view text) {
  std::vector<TracebackFrame> frames;
  std::string function, code;
  bool expect_code = false;  // after "path:line: in function"
  // What the section's first source line (indented, or the failing '>' line) opened.
  enum class Opening { kNone, kDef, kOther } opening = Opening::kNone;
  for (std::string_view line : lines_of(text)) {
    const std::string_view t = trim(line);
    if (t.rfind("_ _ _", 0) == 0) {
      function.clear();
      code.clear();
      expect_code = false;
      opening = Opening::kNone;
      continue;
    }
    if (expect_code) {
      expect_code = false;
      if (!t.empty() && t.find_first_not_of("^~ ") != std::string_view::npos &&
          (line.front() == ' ' || line.front() == '\t')) {
        frames.back().code = std::string(t);
        continue;
      }
    }
    if (auto loc = parse_location_line(line); loc && !loc->bare) {
      const std::string_view rest = loc->rest;
      TracebackFrame f;
      f.file = std::string(loc->path);
      f.line = loc->line;
      if (rest.rfind("in ", 0) == 0) {  // short format: the code line follows
        f.function = std::string(trim(rest.substr(3)));
        frames.push_back(std::move(f));
        expect_code = true;
      } else {  // end of a long-format section: its function and '>' line came before
        f.function = function;
        f.code = code;
        frames.push_back(std::move(f));
      }
      function.clear();
      code.clear();
      opening = Opening::kNone;
      continue;
    }
    if (opening == Opening::kNone && !t.empty() &&
        (line.rfind("    ", 0) == 0 || line.front() == '>')) {
      const std::string_view source = line.front() == '>' ? trim(line.substr(1)) : t;
      opening = source.rfind('@', 0) == 0 || opens_def(source) ? Opening::kDef : Opening::kOther;
    }
    if (opens_def(t)) {
      if (function.empty() && opening == Opening::kDef) {
        std::string_view name = t.substr(t.find("def ") + 4);
        std::size_t end = 0;
        while (end < name.size() && is_identifier_char(name[end])) ++end;
        function = std::string(name.substr(0, end));
      }
      continue;
    }
    if (!line.empty() && line.front() == '>') code = std::string(trim(line.substr(1)));
  }
  return frames;
}

}  // namespace

std::optional<TracebackFrame> parse_frame_line(std::string_view line) {
  std::string_view s = trim(line);
  if (!s.starts_with("File \"")) return std::nullopt;
  s.remove_prefix(6);
  auto q = s.find("\", line ");
  if (q == std::string_view::npos) return std::nullopt;
  TracebackFrame f;
  f.file = std::string(s.substr(0, q));
  s.remove_prefix(q + 8);
  int n = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc()) return std::nullopt;
  f.line = std::max(n, 0);  // "line -3" (no interpreter prints it): unknown, not negative
  s.remove_prefix(static_cast<std::size_t>(ptr - s.data()));
  // Interpreter tracebacks: ", in f"; faulthandler dumps: " in f".
  if (s.starts_with(", in ")) {
    f.function = std::string(trim(s.substr(5)));
  } else if (s.starts_with(" in ")) {
    f.function = std::string(trim(s.substr(4)));
  }
  return f;
}

std::optional<LocationLine> parse_location_line(std::string_view line) {
  if (line.empty() || line.front() == ' ' || line.front() == '\t') return std::nullopt;
  for (std::size_t colon = line.find(':'); colon != std::string_view::npos;
       colon = line.find(':', colon + 1)) {
    std::size_t d = colon + 1;
    while (d < line.size() && line[d] >= '0' && line[d] <= '9') ++d;
    if (d == colon + 1 || (d < line.size() && line[d] != ':')) continue;
    LocationLine l;
    l.path = line.substr(0, colon);
    if (l.path.find(' ') != std::string_view::npos) return std::nullopt;
    std::from_chars(line.data() + colon + 1, line.data() + d, l.line);  // stays 0 on overflow
    l.bare = d == line.size();
    if (!l.bare) l.rest = trim(line.substr(d + 1));
    return l;
  }
  return std::nullopt;
}

ParsedTraceback parse_traceback(std::string_view text) {
  ParsedTraceback tb;
  bool in_frames = false;
  bool most_recent_first = false;  // faulthandler's order
  bool expecting_exception = false;
  for (std::string_view line : lines_of(text)) {
    if (line.starts_with("Traceback (most recent call last):")) {
      tb.frames.clear();
      in_frames = true;
      most_recent_first = false;
      expecting_exception = false;
      continue;
    }
    // faulthandler: "Fatal Python error: Segmentation fault", then per thread
    // "Current thread 0x... (most recent call first):" and frames.
    if (line.starts_with("Fatal Python error: ")) {
      tb.exception = "Fatal Python error";
      tb.message = std::string(trim(line.substr(20)));
      continue;
    }
    if (ends_with_str(line, "(most recent call first):")) {
      tb.frames.clear();
      in_frames = true;
      most_recent_first = true;
      continue;
    }
    if (in_frames) {
      if (auto f = parse_frame_line(line)) {
        tb.frames.push_back(std::move(*f));
        continue;
      }
      if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {  // source, carets
        std::string_view code = trim(line);
        const bool carets = code.find_first_not_of("^~ ") == std::string_view::npos;
        if (!tb.frames.empty() && tb.frames.back().code.empty() && !carets) {
          tb.frames.back().code = std::string(code);
        }
        continue;
      }
      in_frames = false;
      if (most_recent_first) {
        std::reverse(tb.frames.begin(), tb.frames.end());
        most_recent_first = false;
        continue;
      }
      expecting_exception = true;
    }
    if (expecting_exception) {
      std::string exc, msg;
      if (split_exception_line(line, exc, msg)) {
        tb.exception = std::move(exc);
        tb.message = std::move(msg);
        expecting_exception = false;
      }
      continue;
    }
    // "ImportError: Failed to import test module: x" printed before its traceback (unittest),
    // or an exception line with no traceback at all.
    if (tb.exception.empty()) {
      std::string exc, msg;
      if (split_exception_line(line, exc, msg) &&
          (exc.find("Error") != std::string::npos || exc.find("Exception") != std::string::npos)) {
        tb.exception = std::move(exc);
        tb.message = std::move(msg);
      }
    }
  }
  if (in_frames && most_recent_first) std::reverse(tb.frames.begin(), tb.frames.end());
  return tb;
}

std::vector<TracebackFrame> failure_frames(std::string_view traceback) {
  ParsedTraceback tb = parse_traceback(traceback);
  if (!tb.frames.empty()) return tb.frames;
  return pytest_frames(traceback);
}

std::optional<SourceLocation> location_in_file(const ParsedTraceback& tb,
                                               std::string_view test_file) {
  if (test_file.empty()) return std::nullopt;
  for (auto it = tb.frames.rbegin(); it != tb.frames.rend(); ++it) {
    std::string_view f = it->file;
    if (f.size() >= test_file.size() && f.substr(f.size() - test_file.size()) == test_file &&
        (f.size() == test_file.size() || f[f.size() - test_file.size() - 1] == '/')) {
      return SourceLocation{std::string(test_file), it->line};
    }
  }
  return std::nullopt;
}

std::optional<int> find_def_line(const std::string& path, std::string_view function,
                                 std::string_view klass) {
  std::ifstream in(path);
  if (!in || function.empty()) return std::nullopt;
  std::string line;
  int n = 0;
  bool in_class = klass.empty();
  std::optional<int> anywhere;
  while (std::getline(in, line)) {
    ++n;
    std::string_view s = line;
    std::string_view t = trim(s);
    if (!klass.empty() && s.starts_with("class ")) {
      std::string_view rest = s.substr(6);
      in_class = rest.starts_with(klass) && rest.size() > klass.size() &&
                 (rest[klass.size()] == '(' || rest[klass.size()] == ':');
    }
    if (t.starts_with("async ")) t.remove_prefix(6);
    if (t.starts_with("def ") && t.substr(4).starts_with(function) &&
        t.size() > 4 + function.size() && t[4 + function.size()] == '(') {
      if (in_class) return n;
      if (!anywhere) anywhere = n;
    }
  }
  return anywhere;
}

}  // namespace devshim
