#include "runner/cli/terminal_sink.h"

#include <fmt/format.h>

#include "runner/cli/progress.h"

namespace devshim {

namespace {

const char* plural(std::size_t n, const char* many = "s", const char* one = "") {
  return n == 1 ? one : many;
}

struct TextOf {
  std::string operator()(const RunStarted& e) const {
    return fmt::format("runner: run {}{}: {} file{} of {}{}, {} at once, {} -> {}\n", e.run_id,
                       e.resumed ? " resumed" : "", e.files, plural(e.files), e.suite,
                       e.shard.empty() ? "" : " (shard " + e.shard + ")", e.at_once,
                       e.shim ? "shim on" : "shim off (baseline)", e.out_dir.string());
  }
  std::string operator()(const PassStarted& e) const {
    if (e.kind == PassStarted::Kind::kRerun) {
      return fmt::format(
          "runner: rerun {} of {}: {} failing file{} ({} by their failing tests "
          "alone)\n",
          e.pass, e.passes, e.files, plural(e.files), e.narrowed);
    }
    return fmt::format(
        "runner: continuing {} file{} cut short (a crash, a test that ended the session) "
        "without the tests already reported ({} of at most {})\n",
        e.files, plural(e.files), e.pass, e.passes);
  }
  std::string operator()(const TrialStarted& e) const {
    return fmt::format("runner: trying {}: {} test{} of {} gap-log entr{}, in {} file{}\n",
                       e.setting, e.tests, plural(e.tests), e.entries,
                       plural(e.entries, "ies", "y"), e.files, plural(e.files));
  }
  std::string operator()(const TrialEnded& e) const {
    return fmt::format("runner: with {}, {} of the {} tests pass\n", e.setting, e.passed, e.tests);
  }
  std::string operator()(const NoSettingToTry& /*e*/) const {
    return "runner: --try-settings: no gap-log entry of this run names a setting to try\n";
  }
  std::string operator()(const Problem& e) const {
    const char* label = e.severity == Problem::Severity::kWarning ? "warning: "
                        : e.severity == Problem::Severity::kError ? "error: "
                                                                  : "";
    return fmt::format("runner: {}{}\n", label, e.text);
  }
  std::string operator()(const RunRecorded& e) const {
    return fmt::format("runner: run {} {}: {} file{}: {}\nrunner: {}\n", e.run_id, e.status,
                       e.files, plural(e.files), e.file_counts, e.test_counts);
  }
  std::string operator()(const RunClosed& e) const {
    std::string text;
    if (!e.interrupted_by.empty()) {
      text += fmt::format(
          "runner: interrupted by {} while finishing: run {} marked interrupted "
          "(`runner report {}` writes its reports again)\n",
          e.interrupted_by, e.run_id, e.run_id);
    }
    for (const auto& report : e.reports)
      text += fmt::format("runner: report  {}\n", report.string());
    text += fmt::format("runner: logs    {}\nrunner: run log {}\nrunner: results {} (run {})\n",
                        (e.out_dir / "logs").string(), (e.out_dir / "run.log").string(),
                        e.database.string(), e.run_id);
    return text;
  }
  std::string operator()(const FilesListed& e) const {
    std::string text;
    for (const auto& f : e.files) text += f + '\n';
    return text;
  }
};

}  // namespace

std::string terminal_text(const RunEvent& event) { return std::visit(TextOf{}, event); }

TerminalSink::TerminalSink(std::FILE* out, std::FILE* err, const Environment& env)
    : out_(out), err_(err), env_(env) {}

void TerminalSink::report(const RunEvent& event) {
  const bool problem = std::holds_alternative<Problem>(event);
  if (problem) std::fflush(out_);  // a problem never overtakes the lines before it
  std::FILE* to = problem ? err_ : out_;
  const std::string text = terminal_text(event);
  std::fwrite(text.data(), 1, text.size(), to);
  std::fflush(to);
}

std::unique_ptr<FileProgress> TerminalSink::progress(std::size_t files, const ProgressPlan& plan) {
  return std::make_unique<Progress>(out_, TerminalInfo::detect(out_, env_), files, plan);
}

}  // namespace devshim
