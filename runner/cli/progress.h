// What the runner prints while it works (stdout). Contract:
// - on a smart terminal (stdout is a tty and TERM is not "dumb"): one status line, redrawn in
//   place ("\r...\x1b[K"), elided to the terminal width; a failing file also gets its own line
//   above it, never glued to the status line;
//   with an estimate of the time left (ETA) when earlier runs recorded the files' durations;
// - otherwise: one line per finished file, written at once (never held back in a buffer), and a
//   "still running" line for each file running past the heartbeat, then again each heartbeat, so
//   logs of CI jobs and cron mail read top to bottom and show a long file is alive.
// Colour only on a smart terminal, off when NO_COLOR is set, on when CLICOLOR_FORCE is set.
// File names and details are written through printable(): no control character reaches the
// terminal or breaks a line.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "runner/engine/launch_plan.h"
#include "runner/engine/run_events.h"
#include "runner/results/status.h"

namespace devshim {

struct TerminalInfo {
  bool smart = false;  ///< redraw a status line in place
  bool color = false;
  int width = 80;

  /// Decides from isatty(fileno(out)), the window size and env's TERM, NO_COLOR and
  /// CLICOLOR_FORCE.
  static TerminalInfo detect(std::FILE* out, const Environment& env);
};

/// The terminal's FileProgress.
class Progress final : public FileProgress {
 public:
  Progress(std::FILE* out, TerminalInfo term, std::size_t total, ProgressPlan plan = {});

  /// What the runner does before its first file starts (the warm start's imports), shown in the
  /// status line of a smart terminal until a file starts; nothing elsewhere.
  void preparing(const std::string& what) override;
  /// A line of its own (what the run says once: the warm start unavailable, a file started
  /// cold), written above the status line of a smart terminal, never glued to it.
  void note(const std::string& line) override;
  void started(const std::string& file) override;
  /// A file finished; log is shown for failures so a person can open it at once.
  void finished(const std::string& file, FileStatus status, double duration_s,
                const std::string& log, const std::string& detail) override;
  /// Redraws the status line (elapsed time, ETA) on a smart terminal; elsewhere writes the
  /// heartbeat lines that are due.
  void tick() override;
  /// Clears the status line before the runner prints its closing lines.
  void close() override;

  /// The status line as it would be drawn now (without control characters).
  std::string status_line() const;

  /// Seconds of expected work left, spread over the jobs; nullopt without recorded durations.
  std::optional<double> eta_s() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Running {
    int starts = 0;  // a file runs once, but be safe
    Clock::time_point started;
    Clock::time_point last_beat;
  };

  void redraw();
  /// Writes text (already printable) and a newline, first clearing a drawn status line.
  void write_line(const std::string& text);
  void heartbeat(Clock::time_point now);
  std::string paint(const std::string& text, FileStatus status) const;

  std::FILE* out_;
  TerminalInfo term_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::size_t passed_ = 0;
  std::size_t failed_ = 0;
  ProgressPlan plan_;
  double expected_left_s_ = 0;  // expected seconds of the files not finished
  std::map<std::string, Running> running_;
  std::string preparing_;  // shown while no file has started
  Clock::time_point start_;
  bool line_drawn_ = false;
};

/// "1:05" / "1:02:03" for elapsed seconds.
std::string format_elapsed(double seconds);

}  // namespace devshim
