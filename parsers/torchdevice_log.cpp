#include "parsers/torchdevice_log.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "parsers/text.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

TorchDeviceStatus status_word(std::string_view word, std::optional<int> return_code) {
  const std::string w = upper(trim(word));
  if (w == "PASSED" || w == "PASS" || w == "SUCCESS" || w == "OK")
    return TorchDeviceStatus::kPassed;
  if (w == "FAILED" || w == "FAIL" || w == "FAILURE") return TorchDeviceStatus::kFailed;
  if (w == "TIMEOUT" || w == "TIMED OUT" || w == "TIMED_OUT") return TorchDeviceStatus::kTimeout;
  if (w == "CRASHED" || w == "CRASH" || w == "SEGFAULT") return TorchDeviceStatus::kCrashed;
  if (w == "SKIPPED" || w == "NO TESTS" || w == "NO_TESTS") return TorchDeviceStatus::kNoTests;
  if (w == "INTERRUPTED") return TorchDeviceStatus::kInterrupted;
  // TorchDevice's word for a negative return code: the process was killed by a signal.
  if (w == "CRITICAL_FAILURE" && return_code && *return_code < 0)
    return TorchDeviceStatus::kCrashed;
  return TorchDeviceStatus::kError;
}

std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  if (!std::isfinite(v) || v < 0) return std::nullopt;  // from_chars reads "nan", "inf", "-1"
  return v;
}

// The text after "PREFIX" in a line that starts with it (after leading spaces), trimmed.
std::optional<std::string_view> after(std::string_view line, std::string_view prefix) {
  line = trim(line);
  if (!line.starts_with(prefix)) return std::nullopt;
  return trim(line.substr(prefix.size()));
}

// The last component of a path as written ("/tmp/x/minisuite" → "minisuite").
std::string last_component(std::string_view path) {
  while (!path.empty() && (path.back() == '/' || path.back() == '\\')) path.remove_suffix(1);
  auto slash = path.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

std::optional<double> parse_duration(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty()) return std::nullopt;
  if (s.find(':') == std::string_view::npos) {
    if (s.back() == 's') s.remove_suffix(1);
    return parse_number(trim(s));
  }
  // str(timedelta): "[N day[s], ]H:MM:SS[.ffffff]"; negative ones ("-1 day, 23:59:59") are not
  // durations.
  double total = 0;
  if (auto comma = s.find(','); comma != std::string_view::npos) {
    std::string_view days = trim(s.substr(0, comma));
    auto space = days.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    auto n = parse_number(days.substr(0, space));
    if (!n || *n < 0 || !trim(days.substr(space)).starts_with("day")) return std::nullopt;
    total += *n * 86400;
    s = trim(s.substr(comma + 1));
  }
  auto c1 = s.find(':');
  auto c2 = s.find(':', c1 + 1);
  if (c2 == std::string_view::npos) return std::nullopt;
  auto h = parse_number(s.substr(0, c1));
  auto m = parse_number(s.substr(c1 + 1, c2 - c1 - 1));
  auto sec = parse_number(s.substr(c2 + 1));
  if (!h || !m || !sec || *h < 0 || *m < 0 || *sec < 0) return std::nullopt;
  return total + *h * 3600 + *m * 60 + *sec;
}

std::string module_path(const std::string& module) {
  if (module.ends_with(".py")) return module;
  std::string p = module;
  std::replace(p.begin(), p.end(), '.', '/');
  return p + ".py";
}

std::optional<FinishedLine> parse_finished_line(std::string_view line) {
  constexpr std::string_view kMarker = "Finished test: ";
  auto at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kMarker.size());
  constexpr std::string_view kStatus = " - Status: ";
  auto status_at = rest.find(kStatus);
  if (status_at == std::string_view::npos) return std::nullopt;
  FinishedLine f;
  f.module = std::string(trim(rest.substr(0, status_at)));
  rest = rest.substr(status_at + kStatus.size());
  auto rc_at = rest.find("(RC:");
  auto dur_at = rest.find("Duration:");
  if (rc_at != std::string_view::npos) {
    std::string_view rc = trim(rest.substr(rc_at + 4));
    int n = 0;
    if (std::from_chars(rc.data(), rc.data() + rc.size(), n).ec == std::errc()) f.return_code = n;
  }
  f.status = status_word(rest.substr(0, std::min(rc_at, dur_at)), f.return_code);
  if (dur_at != std::string_view::npos) {
    f.duration_s = parse_duration(rest.substr(dur_at + 9)).value_or(0);
  }
  return f;
}

OverallLog read_overall_log(LineReader& lines) {
  OverallLog out;
  std::string_view line;
  std::string logs_dir;
  bool expect_log_file = false;  // the line after "Finished test:" may name its log
  bool in_found = false;         // in the list after "Found N test files to run:"
  while (lines.next(line)) {
    if (in_found) {
      if (auto f = after(line, "- "); f && line.starts_with("  - ")) {
        out.found.emplace_back(*f);
        continue;
      }
      in_found = false;
    }
    if (expect_log_file) {
      expect_log_file = false;
      if (auto p = after(line, "Log file:")) {
        out.finished.back().log_file = std::string(*p);
        continue;
      }
    }
    if (auto f = parse_finished_line(line)) {
      out.finished.push_back(std::move(*f));
      expect_log_file = true;
    } else if (auto p = after(line, "Target project repo:"); p && out.project_root.empty()) {
      out.project_root = std::string(*p);
    } else if (auto d = after(line, "Log directory for individual tests:"); d && logs_dir.empty()) {
      logs_dir = std::string(*d);
    } else if (line.starts_with("Found ") && line.ends_with(" test files to run:")) {
      in_found = true;
    }
  }
  out.project = last_component(out.project_root);
  if (out.project.empty()) out.project = last_component(logs_dir);
  return out;
}

OverallLog read_overall_log(const fs::path& path) {
  LineReader lines(path);
  OverallLog out = read_overall_log(lines);
  out.path = path;
  return out;
}

std::string series_of(const fs::path& overall) {
  std::string series = overall.stem().string();
  if (auto us = series.find('_'); us != std::string::npos && us > 0) series.resize(us);
  return series;
}

bool looks_like_pytest(const fs::path& log) {
  LineReader probe(log);
  std::string_view line;
  for (int i = 0; i < 20 && probe.next(line); ++i) {
    if (line.find("test session starts") != std::string_view::npos) return true;
  }
  return false;
}

PerFileLogIndex::PerFileLogIndex(std::vector<std::string> paths) : paths_(std::move(paths)) {
  std::sort(paths_.begin(), paths_.end());
  paths_.erase(std::unique(paths_.begin(), paths_.end()), paths_.end());
  by_suffix_.reserve(paths_.size() * 4);
  below_top_.reserve(paths_.size());
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    const std::string& p = paths_[i];
    // emplace keeps the first (in path order) of several logs with the same suffix.
    by_suffix_.emplace(p, i);
    bool first = true;
    for (auto slash = p.find('/'); slash != std::string::npos; slash = p.find('/', slash + 1)) {
      std::string suffix = p.substr(slash + 1);
      if (first) below_top_.emplace(suffix, i);
      first = false;
      by_suffix_.emplace(std::move(suffix), i);
    }
  }
}

const std::string* PerFileLogIndex::lookup(const std::string& key) const {
  ++lookups_;
  auto it = by_suffix_.find(key);
  return it == by_suffix_.end() ? nullptr : &paths_[it->second];
}

const std::string* PerFileLogIndex::find(const std::string& module_path, const std::string& project,
                                         const std::string& log_file) const {
  // 1. The path the overall log names: absolute, or relative to TorchDevice's checkout; its
  //    longest suffix that is a log here.
  if (!log_file.empty()) {
    std::string named = fs::path(log_file).generic_string();
    for (std::size_t from = 0; from < named.size();) {
      if (from == 0 || named[from - 1] == '/') {
        if (const std::string* hit = lookup(named.substr(from))) return hit;
      }
      auto slash = named.find('/', from);
      if (slash == std::string::npos) break;
      from = slash + 1;
    }
  }
  const std::string below_tests =
      (module_path.starts_with("tests/") ? module_path.substr(6) : module_path) + ".log";
  // 2. TorchDevice's layout: <project>/<path below tests/>.log.
  if (!project.empty()) {
    if (const std::string* hit = lookup(project + "/" + below_tests)) return hit;
  }
  // 3. The same one folder below LOGDIR, whatever the project folder's name.
  ++lookups_;
  if (auto it = below_top_.find(below_tests); it != below_top_.end()) return &paths_[it->second];
  // 4. The file's whole path at a folder boundary (<anything>/tests/utils/test_x.py.log).
  return lookup(module_path + ".log");
}

}  // namespace devshim
