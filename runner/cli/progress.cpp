#include "runner/cli/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/printable.h"

namespace devshim {

TerminalInfo TerminalInfo::detect(std::FILE* out, const Environment& env) {
  auto value = [&](const char* name) { return value_of(env, name); };
  TerminalInfo t;
  const int fd = ::fileno(out);
  t.smart = ::isatty(fd) != 0 && value("TERM") != "dumb";
  t.color = t.smart && value("NO_COLOR").empty();
  if (const std::string force = value("CLICOLOR_FORCE"); !force.empty() && force != "0") {
    t.color = true;
  }
  winsize ws{};
  if (t.smart && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10) t.width = ws.ws_col;
  return t;
}

std::string format_elapsed(double seconds) {
  const long s = std::lround(seconds);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

Progress::Progress(std::FILE* out, TerminalInfo term, std::size_t total, ProgressPlan plan)
    : out_(out), term_(term), total_(total), plan_(std::move(plan)), start_(Clock::now()) {
  for (const auto& [file, seconds] : plan_.expected_s) expected_left_s_ += seconds;
}

void Progress::preparing(const std::string& what) {
  preparing_ = what;
  redraw();
}

void Progress::note(const std::string& line) {
  write_line(printable(line));
  redraw();
}

void Progress::write_line(const std::string& text) {
  if (term_.smart && line_drawn_) std::fputs("\r\x1b[K", out_);
  std::fputs(text.c_str(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
  line_drawn_ = false;
}

void Progress::started(const std::string& file) {
  preparing_.clear();
  Running& r = running_[file];
  if (r.starts++ == 0) r.started = r.last_beat = Clock::now();
  redraw();
}

std::string Progress::paint(const std::string& text, FileStatus status) const {
  if (!term_.color) return text;
  const char* code = "";
  switch (status) {
    case FileStatus::kPassed:
      code = "\x1b[32m";
      break;
    case FileStatus::kNoTests:
      code = "\x1b[33m";
      break;
    default:
      code = is_failure(status) ? "\x1b[31m" : "\x1b[33m";
  }
  return std::string(code) + text + "\x1b[0m";
}

void Progress::finished(const std::string& file, FileStatus status, double duration_s,
                        const std::string& log, const std::string& detail) {
  if (auto it = running_.find(file); it != running_.end() && --it->second.starts <= 0) {
    running_.erase(it);
  }
  if (auto it = plan_.expected_s.find(file); it != plan_.expected_s.end()) {
    expected_left_s_ = std::max(0.0, expected_left_s_ - it->second);
  }
  ++done_;
  if (status == FileStatus::kPassed || status == FileStatus::kNoTests) {
    ++passed_;
  } else if (is_failure(status)) {
    ++failed_;
  }
  const bool show_line = !term_.smart || is_failure(status) || status == FileStatus::kInterrupted;
  if (show_line) {
    std::string line =
        fmt::format("[{}/{}] {} {} ({:.1f}s)", done_, total_,
                    paint(std::string(to_string(status)), status), printable(file), duration_s);
    if (!detail.empty()) line += " " + printable(detail);
    if (is_failure(status) && !log.empty()) line += "\n    log: " + printable(log);
    write_line(line);
  }
  redraw();
}

std::optional<double> Progress::eta_s() const {
  if (plan_.expected_s.empty()) return std::nullopt;
  // Running files: what their estimate leaves beyond the time they have run already.
  const auto now = Clock::now();
  double left = expected_left_s_;
  for (const auto& [file, r] : running_) {
    auto it = plan_.expected_s.find(file);
    if (it == plan_.expected_s.end()) continue;
    const double ran = std::chrono::duration<double>(now - r.started).count();
    left -= std::min(ran, it->second);
  }
  return std::max(0.0, left) / std::max(1, plan_.jobs);
}

std::string Progress::status_line() const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string running;
  if (!preparing_.empty()) running = " " + printable(preparing_);
  if (!running_.empty()) {
    running = " running: " + printable(running_.begin()->first);
    if (running_.size() > 1) running += fmt::format(" (+{} more)", running_.size() - 1);
  }
  std::string eta;
  if (auto left = eta_s(); left && done_ < total_) eta = ", ETA " + format_elapsed(*left);
  return fmt::format("[{}/{}] passed {}, failed {}, {}{}{}", done_, total_, passed_, failed_,
                     format_elapsed(elapsed), eta, running);
}

void Progress::heartbeat(Clock::time_point now) {
  if (plan_.heartbeat.count() <= 0) return;
  bool wrote = false;
  for (auto& [file, r] : running_) {
    if (now - r.last_beat < plan_.heartbeat) continue;
    r.last_beat = now;
    const double ran = std::chrono::duration<double>(now - r.started).count();
    std::fprintf(out_, "[%zu/%zu] still running: %s (%s)\n", done_, total_, printable(file).c_str(),
                 format_elapsed(ran).c_str());
    wrote = true;
  }
  if (wrote) std::fflush(out_);
}

void Progress::redraw() {
  if (!term_.smart) return;
  std::string line = status_line();
  if (static_cast<int>(line.size()) > term_.width - 1) {
    line = line.substr(0, static_cast<std::size_t>(std::max(term_.width - 4, 1))) + "...";
  }
  std::fputs("\r", out_);
  std::fputs(line.c_str(), out_);
  std::fputs("\x1b[K", out_);
  std::fflush(out_);
  line_drawn_ = true;
}

void Progress::tick() {
  if (term_.smart) {
    redraw();
  } else {
    heartbeat(Clock::now());
  }
}

void Progress::close() {
  if (term_.smart && line_drawn_) {
    std::fputs("\r\x1b[K", out_);
    std::fflush(out_);
    line_drawn_ = false;
  }
  std::fflush(out_);
}

}  // namespace devshim
