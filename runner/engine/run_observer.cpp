#include "runner/engine/run_observer.h"

#include <fmt/format.h>

#include <filesystem>

#include "parsers/text.h"
#include "runner/engine/collect.h"
#include "runner/engine/frameworks/framework_traits.h"
#include "runner/engine/launch_plan.h"
#include "runner/results/file_error.h"
#include "runner/results/gap_log.h"
#include "runner/results/redirection_record.h"
#include "runner/results/sqlite.h"
#include "runner/results/status.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

// Why a file ended as it did, when its status alone does not say.
std::string describe(const ProcessResult& r, std::uint64_t max_log_bytes, const ProcessSpec& spec) {
  const fs::path& log = spec.log_path;
  if (!r.launch_error.empty()) return r.launch_error;
  std::error_code ec;
  if (r.log_too_big) {
    return fmt::format("{}: its log passed the size limit of {} MiB (--max-log-mb), cut there",
                       r.signal ? "killed" : "exited", max_log_bytes >> 20U);
  }
  if (r.timed_out) return fmt::format("killed after the timeout of {:g}s", r.timeout_s);
  if (r.interrupted) return "killed: run interrupted";
  if (r.exit_code && *r.exit_code != 0 && fs::file_size(log, ec) == 0 && !ec) {
    // A "python" that is no Python (/bin/false) ends here too: name what ran.
    return fmt::format(
        "the log is empty: {} exited with {} and wrote nothing (is it the interpreter or test "
        "binary meant? were its stdout and stderr closed?)",
        spec.argv.empty() ? std::string("the process") : spec.argv.front(), *r.exit_code);
  }
  if (r.signal) return "killed by " + signal_name(*r.signal);
  return "";
}

}  // namespace

void RunObserver::on_start(std::size_t i) {
  plan_.log->line("Started test: " + plan_.files[i].rel_path);
  progress_.started(plan_.files[i].rel_path);
}

void RunObserver::on_finish(std::size_t i, const ProcessResult& r) {
  const ProcessSpec& spec = plan_.specs[i];
  CollectedFile collected = collect_results(plan_.suite, plan_.files[i], spec, r);
  FileRecord rec = file_record(plan_.files[i].rel_path, collected, r, spec, plan_.out_dir);
  if (const std::string why = describe(r, plan_.pool.max_log_bytes, spec); !why.empty()) {
    rec.note = rec.note.empty() ? why : why + "; " + rec.note;
  }
  RecordRead record;
  if (auto it = spec.env.find(kRecordVar); it != spec.env.end()) {
    record = read_redirection_record(it->second, plan_.suite.project_root);
    if (!record.error.empty()) {
      rec.note += (rec.note.empty() ? "" : "; ") + ("redirection record unusable: " + record.error);
    }
    // The shim's processes took this lock to add to the record; none is left (the pool killed
    // the file's group), so the lock has nothing more to guard.
    std::error_code ec;
    fs::remove(it->second + ".lock", ec);
    mark_cuda_path(framework_name(plan_.suite.framework), plan_.suite.tests_dir,
                   plan_.files[i].rel_path, record, collected.cases);
    mark_cuda_branch_failures(collected.cases, plan_.suite.project_root);
  }
  any_failure_ = any_failure_ || is_failure(*rec.status);
  if (r.warm) {
    ++warm_files_;
  } else if (r.launch_error.empty()) {
    ++cold_files_;
  }
  std::vector<const TestCase*> tests;
  for (const TestCase& c : collected.cases) tests.push_back(&c);
  const std::optional<FileError> error = file_error(rec, tests);
  pending_.push_back({rec, std::move(collected.cases), std::move(record.entries)});
  flush();

  std::string rc = r.exit_code ? std::to_string(*r.exit_code)
                   : r.signal  ? "-" + std::to_string(*r.signal)
                               : std::string("none");
  plan_.log->line(fmt::format("Finished test: {} - Status: {} (RC: {}) Duration: {:.2f}s{}",
                              rec.path, to_string(*rec.status), rc, r.duration_s,
                              rec.note.empty() ? "" : " - " + rec.note));
  std::string detail = rec.note;
  if (error) {
    // A file that reported no test says why, in the run log and on the terminal.
    std::string where;
    for (const TracebackFrame& f : error->frames) {
      where += (where.empty() ? " at " : " <- ") + frame_text(f);
    }
    plan_.log->line(fmt::format("File error: {}: {}{}", rec.path, file_error_text(*error), where));
    const std::string text = file_error_text(*error);
    detail += (detail.empty() ? "" : " ") + std::string(cut_utf8(text, 200)) +
              (text.size() > 200 ? "…" : "");
  }
  progress_.finished(rec.path, *rec.status, r.duration_s, spec.log_path.string(), detail);
}

void RunObserver::on_warm_starting(const WarmStartOptions& options) {
  std::vector<std::string> names;
  for (const auto& m : options.preload) names.push_back(m.starts_with('?') ? m.substr(1) : m);
  progress_.preparing(fmt::format("warm start: importing {}", fmt::join(names, ", ")));
}

void RunObserver::on_warm_start(const std::optional<WarmReady>& ready, const std::string& why) {
  if (ready) {
    start_ = {{"mode", "warm"}, {"preloaded", ready->preloaded}, {"ready_s", ready->ready_s}};
    plan_.log->line(fmt::format("Warm start: zygote {} ready in {:.1f}s (preloaded {})", ready->pid,
                                ready->ready_s, fmt::join(ready->preloaded, ", ")));
    return;
  }
  start_ = {{"mode", "cold"}, {"why", "the zygote could not start: " + why}};
  progress_.preparing("");
  progress_.note(fmt::format("runner: warm start unavailable ({}): every file starts cold", why));
  plan_.log->line(fmt::format("Warm start unavailable ({}): every file starts cold", why));
}

nlohmann::json RunObserver::start() const {
  if (!plan_.pool.warm) {
    std::string why = "--cold";
    if (plan_.options.warm) {
      why = framework_traits(plan_.suite.framework).runs_python()
                ? std::string(warm_start_refusal())
                : "not a Python suite";
    }
    if (why.empty()) why = "no interpreter";
    return {{"mode", "cold"}, {"why", why}};
  }
  if (start_.is_null() && warm_files_ + cold_files_ == 0) return start_;  // no file ran
  nlohmann::json start = start_;
  if (start.is_null()) {
    start = {{"mode", "cold"}, {"why", "every file started before the warm parent was ready"}};
  } else if (start["mode"] == "warm" && cold_files_ > 0) {
    start["cold_files"] = cold_files_;
  }
  return start;
}

void RunObserver::on_cold_start(std::size_t i, const std::string& why) {
  plan_.log->line(fmt::format("Cold start of {}: {}", plan_.files[i].rel_path, why));
  if (!said_cold_)
    progress_.note(fmt::format("runner: {}: starting it cold (run.log lists each)", why));
  said_cold_ = true;
}

void RunObserver::on_tick() {
  if (!pending_.empty()) flush();
  progress_.tick();
}

bool RunObserver::flush() {
  while (!pending_.empty()) {
    const Pending& p = pending_.front();
    try {
      plan_.store->record_file(run_id_, p.file, p.cases, p.redirections);
    } catch (const sql::BusyError& e) {
      if (!warned_locked_) {
        warned_locked_ = true;
        plan_.log->line(std::string("Database locked, results kept in memory until it is free: ") +
                        e.what());
        events_.report(Problem{Problem::Severity::kWarning,
                               std::string(e.what()) + "; results wait in memory"});
      }
      return false;
    }
    pending_.pop_front();
  }
  return true;
}

void RunObserver::on_interrupt(int signo) {
  plan_.log->line("Interrupted by " + signal_name(signo) + ": stopping the running files");
}

}  // namespace devshim
