// The command line's RunSink: a run's events as the lines docs/cli.md shows. Progress, the start
// of each pass and the closing lines go to stdout; problems to stderr.
#pragma once

#include <cstdio>
#include <memory>

#include "runner/engine/launch_plan.h"
#include "runner/engine/run_events.h"

namespace devshim {

class TerminalSink final : public RunSink {
 public:
  /// env: the runner's environment (TerminalInfo::detect reads TERM, NO_COLOR, CLICOLOR_FORCE).
  TerminalSink(std::FILE* out, std::FILE* err, const Environment& env);

  void report(const RunEvent& event) override;
  std::unique_ptr<FileProgress> progress(std::size_t files, const ProgressPlan& plan) override;

 private:
  std::FILE* out_;
  std::FILE* err_;
  const Environment& env_;
};

/// The text of an event as the terminal shows it, each line ending in '\n'.
std::string terminal_text(const RunEvent& event);

}  // namespace devshim
