// What the runner prints while it works (stdout). Contract:
// - on a smart terminal (stdout is a tty and TERM is not "dumb"): one status line, redrawn in
//   place ("\r...\x1b[K"), elided to the terminal width; a failing file also gets its own line
//   above it, never glued to the status line;
// - otherwise: one line per finished file, nothing else, so logs of CI jobs read top to bottom.
// Colour only on a smart terminal, off when NO_COLOR is set, on when CLICOLOR_FORCE is set.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "runner/results/status.h"

namespace devshim {

struct TerminalInfo {
  bool smart = false;  ///< redraw a status line in place
  bool color = false;
  int width = 80;

  /// Decides from isatty(fileno(out)), TERM, NO_COLOR, CLICOLOR_FORCE and the window size.
  static TerminalInfo detect(std::FILE* out);
};

class Progress {
 public:
  Progress(std::FILE* out, TerminalInfo term, std::size_t total);

  void started(const std::string& file);
  /// A file finished; log is shown for failures so a person can open it at once.
  void finished(const std::string& file, FileStatus status, double duration_s,
                const std::string& log, const std::string& detail);
  /// Redraws the status line (elapsed time moves); no-op on a dumb terminal.
  void tick();
  /// Clears the status line before the runner prints its closing lines.
  void close();

  /// The status line as it would be drawn now (without control characters).
  std::string status_line() const;

 private:
  void redraw();
  std::string paint(const std::string& text, FileStatus status) const;

  std::FILE* out_;
  TerminalInfo term_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::size_t passed_ = 0;
  std::size_t failed_ = 0;
  std::map<std::string, int> running_;  // file -> starts (a file runs once, but be safe)
  std::chrono::steady_clock::time_point start_;
  bool line_drawn_ = false;
};

/// "1:05" / "1:02:03" for elapsed seconds.
std::string format_elapsed(double seconds);

}  // namespace devshim
