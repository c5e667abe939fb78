#include "parsers/pytest_failure.h"

#include <utility>
#include <vector>

#include "parsers/text.h"

namespace devshim {

namespace pytest_report {

namespace {

constexpr std::size_t kHeadBytes = std::size_t{32} * 1024;  // a stored traceback keeps its head...
constexpr std::size_t kTailBytes = std::size_t{32} * 1024;  // ...and its tail

}  // namespace

std::string capped_message(std::string_view s) {
  return std::string(cut_utf8(trim(s), kMaxMessageBytes));
}

bool split_exception(std::string_view text, std::string_view& name, std::string_view& rest) {
  std::size_t i = 0;
  while (i < text.size() && (is_identifier_char(text[i]) || text[i] == '.')) ++i;
  if (i == 0 || text[0] == '.' || (text[0] >= '0' && text[0] <= '9') || text[i - 1] == '.')
    return false;
  if (i < text.size() && text[i] != ':') return false;
  name = text.substr(0, i);
  rest = i < text.size() ? trim(text.substr(i + 1)) : std::string_view{};
  return true;
}

bool plausible_exception(std::string_view name) {
  std::size_t dot = name.rfind('.');
  std::string_view last = dot == std::string_view::npos ? name : name.substr(dot + 1);
  return !last.empty() && last[0] >= 'A' && last[0] <= 'Z';
}

bool path_matches(std::string_view printed, std::string_view test_file) {
  if (printed.starts_with("./")) printed.remove_prefix(2);
  if (test_file.starts_with("./")) test_file.remove_prefix(2);
  if (printed.empty() || test_file.empty()) return false;
  if (printed == test_file) return true;
  auto suffix = [](std::string_view longer, std::string_view shorter) {
    return longer.size() > shorter.size() && longer.ends_with(shorter) &&
           longer[longer.size() - shorter.size() - 1] == '/';
  };
  return suffix(printed, test_file) || suffix(test_file, printed);
}

std::optional<LocationLine> py_location_line(std::string_view line) {
  std::optional<LocationLine> l = parse_location_line(line);
  if (!l || !l->path.ends_with(".py")) return std::nullopt;
  return l;
}

void CappedText::add(std::string_view line) {
  if (!started_) {
    if (trim(line).empty()) return;
    started_ = true;
  }
  if (tail_.empty() && head_.size() + line.size() + 1 <= kHeadBytes) {
    head_.append(line);
    head_.push_back('\n');
    return;
  }
  std::string_view kept = cut_utf8(line, kTailBytes);
  tail_bytes_ += kept.size() + 1;
  tail_.emplace_back(kept);
  while (tail_bytes_ > kTailBytes && tail_.size() > 1) {
    tail_bytes_ -= tail_.front().size() + 1;
    tail_.pop_front();
    ++cut_lines_;
  }
}

std::string CappedText::str() const {
  std::string out = head_;
  if (cut_lines_ > 0) out += "[... " + std::to_string(cut_lines_) + " lines cut ...]\n";
  for (const auto& l : tail_) {
    out += l;
    out.push_back('\n');
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\t')) {
    out.pop_back();
  }
  return out;
}

namespace {

constexpr std::size_t kMaxEBlockLines = 64;
constexpr std::size_t kMaxFramePaths = 256;

// "tests.test_x.MyError" names the class pytest's location line calls "MyError".
bool same_exception(std::string_view full, std::string_view short_name) {
  if (full == short_name) return true;
  return full.size() > short_name.size() && full.ends_with(short_name) &&
         full[full.size() - short_name.size() - 1] == '.';
}

}  // namespace

void FailureScanner::feed(std::string_view line) {
  if (first_line_.empty()) {
    std::string_view t = trim(line);
    if (!t.empty()) first_line_ = capped_message(t);
    // pytest's FixtureLookupErrorRepr starts "file /x/tests/t.py, line 37".
    fixture_lookup_ = t.starts_with("file ") && t.find(", line ") != std::string_view::npos;
  }
  if (!line.empty() && line[0] == 'E' && (line.size() == 1 || line[1] == ' ')) {
    if (!in_e_) e_block_.clear();
    in_e_ = true;
    if (e_block_.size() < kMaxEBlockLines) e_block_.push_back(capped_message(line.substr(1)));
    return;
  }
  in_e_ = false;
  if (auto f = py_location_line(line)) {
    add_frame(f->path, f->line);
    std::string_view name, rest;
    if (split_exception(f->rest, name, rest) && plausible_exception(name)) {
      loc_exception_ = std::string(name);
    }
    return;
  }
  if (auto f = parse_frame_line(line)) add_frame(f->file, f->line);
}

PytestFailure FailureScanner::finish(std::string_view text, std::string_view test_file) const {
  PytestFailure r;
  if (!e_block_.empty()) {
    bool found = false;
    for (const auto& l : e_block_) {
      std::string_view name, rest;
      if (!split_exception(l, name, rest)) continue;
      if (loc_exception_.empty() ? plausible_exception(name)
                                 : same_exception(name, loc_exception_)) {
        r.exception = std::string(name);
        r.message = std::string(rest);
        found = true;
        break;
      }
    }
    if (!found) {
      r.exception = loc_exception_;
      r.message = e_block_.front();
    }
  } else if (!loc_exception_.empty()) {
    r.exception = loc_exception_;
  } else {
    ParsedTraceback tb = parse_traceback(text);
    r.exception = tb.exception;
    r.message = capped_message(tb.message);
  }
  if (r.exception.empty() && r.message.starts_with("assert ")) r.exception = "AssertionError";
  if (r.exception.empty() && fixture_lookup_) r.exception = "_pytest.fixtures.FixtureLookupError";
  if (r.exception.empty() && r.message.empty()) r.message = first_line_;
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    if (path_matches(it->first, test_file)) {
      r.location = SourceLocation{std::string(test_file), it->second};
      break;
    }
  }
  return r;
}

void FailureScanner::add_frame(std::string_view path, int line) {
  for (auto it = frames_.begin(); it != frames_.end(); ++it) {
    if (it->first == path) {
      frames_.erase(it);
      break;
    }
  }
  if (frames_.size() >= kMaxFramePaths) frames_.erase(frames_.begin());
  frames_.emplace_back(std::string(path), line);
}

}  // namespace pytest_report

PytestFailure summarize_pytest_failure(std::string_view text, std::string_view test_file) {
  pytest_report::FailureScanner scan;
  pytest_report::for_each_line(text, [&](std::string_view l) { scan.feed(l); });
  return scan.finish(text, test_file);
}

std::string pytest_traceback_text(std::string_view text) {
  pytest_report::CappedText capped;
  pytest_report::for_each_line(text, [&](std::string_view l) { capped.add(l); });
  return capped.str();
}

}  // namespace devshim
