#include "runner/engine/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

namespace devshim {

TerminalInfo TerminalInfo::detect(std::FILE* out) {
  TerminalInfo t;
  const int fd = ::fileno(out);
  const char* term = std::getenv("TERM");
  t.smart = ::isatty(fd) != 0 && !(term != nullptr && std::string(term) == "dumb");
  const char* no_color = std::getenv("NO_COLOR");
  const char* force = std::getenv("CLICOLOR_FORCE");
  t.color = t.smart && !(no_color != nullptr && *no_color != '\0');
  if (force != nullptr && *force != '\0' && std::string(force) != "0") t.color = true;
  winsize ws{};
  if (t.smart && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10) t.width = ws.ws_col;
  return t;
}

std::string format_elapsed(double seconds) {
  const long s = std::lround(seconds);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

Progress::Progress(std::FILE* out, TerminalInfo term, std::size_t total)
    : out_(out), term_(term), total_(total), start_(std::chrono::steady_clock::now()) {}

void Progress::started(const std::string& file) {
  ++running_[file];
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
  if (auto it = running_.find(file); it != running_.end() && --it->second <= 0) running_.erase(it);
  ++done_;
  if (status == FileStatus::kPassed || status == FileStatus::kNoTests) {
    ++passed_;
  } else if (is_failure(status)) {
    ++failed_;
  }
  const bool show_line = !term_.smart || is_failure(status) || status == FileStatus::kInterrupted;
  if (show_line) {
    std::string line = fmt::format("[{}/{}] {} {} ({:.1f}s)", done_, total_,
                                   paint(std::string(to_string(status)), status), file, duration_s);
    if (!detail.empty()) line += " " + detail;
    if (is_failure(status) && !log.empty()) line += "\n    log: " + log;
    if (term_.smart && line_drawn_) std::fputs("\r\x1b[K", out_);
    std::fputs(line.c_str(), out_);
    std::fputc('\n', out_);
    line_drawn_ = false;
  }
  redraw();
}

std::string Progress::status_line() const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string running;
  if (!running_.empty()) {
    running = " running: " + running_.begin()->first;
    if (running_.size() > 1) running += fmt::format(" (+{} more)", running_.size() - 1);
  }
  return fmt::format("[{}/{}] passed {}, failed {}, {}{}", done_, total_, passed_, failed_,
                     format_elapsed(elapsed), running);
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

void Progress::tick() { redraw(); }

void Progress::close() {
  if (term_.smart && line_drawn_) {
    std::fputs("\r\x1b[K", out_);
    std::fflush(out_);
    line_drawn_ = false;
  }
  std::fflush(out_);
}

}  // namespace devshim
