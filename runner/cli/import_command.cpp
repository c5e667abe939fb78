#include "runner/cli/import_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/in_order.h"
#include "parsers/line_reader.h"
#include "parsers/pytest_text.h"
#include "parsers/torchdevice_log.h"
#include "runner/engine/collect.h"
#include "runner/engine/process_pool.h"
#include "runner/engine/suite.h"
#include "runner/results/store.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

// The file status a status word of TorchDevice's overall log stands for.
FileStatus file_status(TorchDeviceStatus s) {
  switch (s) {
    case TorchDeviceStatus::kPassed:
      return FileStatus::kPassed;
    case TorchDeviceStatus::kFailed:
      return FileStatus::kFailed;
    case TorchDeviceStatus::kError:
      return FileStatus::kError;
    case TorchDeviceStatus::kTimeout:
      return FileStatus::kTimeout;
    case TorchDeviceStatus::kCrashed:
      return FileStatus::kCrashed;
    case TorchDeviceStatus::kNoTests:
      return FileStatus::kNoTests;
    case TorchDeviceStatus::kInterrupted:
      return FileStatus::kInterrupted;
  }
  return FileStatus::kError;
}

// What one walk of LOGDIR finds: the overall logs directly in it, the per-file logs (*.py.log)
// anywhere below (relative to LOGDIR).
struct LogFolder {
  std::vector<fs::path> overall;
  std::vector<std::string> per_file;
};

LogFolder walk_log_folder(const fs::path& log_dir) {
  std::error_code ec;
  if (!fs::is_directory(log_dir, ec)) {
    throw UsageError(fmt::format("{}: no such folder", log_dir.string()));
  }
  LogFolder found;
  for (auto it = fs::recursive_directory_iterator(log_dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string name = it->path().filename().string();
    if (name.ends_with(".py.log")) {
      found.per_file.push_back(it->path().lexically_relative(log_dir).generic_string());
    } else if (name.ends_with(".log") && it.depth() == 0) {
      found.overall.push_back(it->path());
    }
  }
  std::sort(found.overall.begin(), found.overall.end());
  return found;
}

// The last (by name) overall log that has "Finished test:" lines.
OverallLog read_run_log(const fs::path& log_dir, const std::vector<fs::path>& overall) {
  OverallLog log;
  for (const auto& candidate : overall) {
    OverallLog found = read_overall_log(candidate);
    if (!found.finished.empty()) log = std::move(found);
  }
  if (log.finished.empty()) {
    throw UsageError(
        fmt::format("{}: no overall log with \"Finished test:\" lines found", log_dir.string()));
  }
  return log;
}

// The files the overall log says it found, and every file that finished: sorted, unique.
std::vector<std::string> planned_files(const OverallLog& log) {
  std::vector<std::string> planned;
  planned.reserve(log.found.size() + log.finished.size());
  for (const auto& f : log.finished) planned.push_back(module_path(f.module));
  for (const auto& f : log.found) planned.push_back(module_path(f));
  std::sort(planned.begin(), planned.end());
  planned.erase(std::unique(planned.begin(), planned.end()), planned.end());
  return planned;
}

// A planned file that never finished but has a per-file log was running when TorchDevice's
// runner stopped (Ctrl-C, a kill): interrupted, its running test the culprit. One without a log
// never started: it stays not run. Either makes the run interrupted.
struct Unfinished {
  std::vector<FinishedLine> files;
  bool interrupted = false;
};

Unfinished unfinished_files(const std::vector<std::string>& planned, const OverallLog& log,
                            const PerFileLogIndex& index) {
  std::vector<std::string> finished_paths;
  finished_paths.reserve(log.finished.size());
  for (const FinishedLine& f : log.finished) finished_paths.push_back(module_path(f.module));
  std::sort(finished_paths.begin(), finished_paths.end());
  Unfinished out;
  for (const std::string& rel : planned) {
    if (std::binary_search(finished_paths.begin(), finished_paths.end(), rel)) continue;
    out.interrupted = true;
    if (!index.find(rel, log.project, "")) continue;
    FinishedLine f;
    f.module = rel;
    f.status = TorchDeviceStatus::kInterrupted;
    out.files.push_back(std::move(f));
  }
  return out;
}

// What collect_results needs to judge a unittest log the way a run would.
Suite imported_suite(const std::string& series, const OverallLog& log, const fs::path& log_dir) {
  Suite suite;
  suite.name = series;
  suite.framework = Framework::kUnittest;
  suite.tests_dir = "";
  // Failing tests without a location get the line of their def when the project is here (an
  // absolute path: a relative one was relative to TorchDevice's working folder, not ours).
  const fs::path project_root(log.project_root);
  std::error_code ec;
  suite.project_root = project_root.is_absolute() && fs::is_directory(project_root, ec)
                           ? project_root
                           : fs::absolute(log_dir);
  return suite;
}

RunRecord imported_run(const std::string& series, const OverallLog& log, const fs::path& log_dir) {
  RunRecord run;
  run.suite = series;
  run.suite_file = log.path.string();
  run.framework = "imported";
  run.command_line = {"runner", "import", log_dir.string()};
  run.started_at = iso8601_utc_now();
  run.project_root = log_dir.string();
  run.tests_dir = ".";
  run.out_dir = fs::absolute(log_dir).string();
  return run;
}

// Threads that read and parse logs beside the one writing the database, and how many files they
// may be ahead of it (what the import holds in memory at most).
constexpr unsigned kMaxParseThreads = 8;
constexpr std::size_t kParseAhead = 64;

// One file's row and tests, from its line of the overall log and its per-file log (when there is
// one: record.parsed_from is then "log").
struct ImportedFile {
  FileRecord record;
  std::vector<TestCase> cases;
};

ImportedFile import_file(const FinishedLine& f, const Suite& suite, const fs::path& log_dir,
                         const std::string& project, const PerFileLogIndex& index) {
  const std::string rel = module_path(f.module);
  ImportedFile out;
  FileRecord& rec = out.record;
  rec.path = rel;
  rec.status = file_status(f.status);
  rec.exit_code = f.return_code;
  rec.duration_s = f.duration_s;
  rec.timed_out = f.status == TorchDeviceStatus::kTimeout;
  if (const std::string* key = index.find(rel, project, f.log_file)) {
    const fs::path path = log_dir / *key;
    rec.log_path = *key;
    rec.parsed_from = "log";
    if (looks_like_pytest(path)) {
      LineReader lines(path);
      ParsedFile pf = parse_pytest_text(lines);
      out.cases = std::move(pf.cases);
      rec.reported = pf.reported;
    } else {
      // Judged as a run judges its files: the return code and the parsed log together
      // (an import error is error, the test a signal killed is the culprit).
      ProcessResult result;
      if (f.return_code && *f.return_code < 0) {
        result.signal = -*f.return_code;
      } else {
        result.exit_code = f.return_code;
      }
      result.timed_out = f.status == TorchDeviceStatus::kTimeout;
      result.interrupted = f.status == TorchDeviceStatus::kInterrupted;
      result.duration_s = f.duration_s;
      TestFile file;
      file.rel_path = rel;
      ProcessSpec spec;
      spec.log_path = path;
      CollectedFile collected = collect_results(suite, file, spec, result);
      out.cases = std::move(collected.cases);
      rec.reported = collected.reported;
      // Without a return code the log's own word stands.
      if (f.return_code || result.timed_out || result.interrupted) {
        rec.status = collected.status;
        rec.note = collected.note;
      }
    }
  }
  if (f.return_code && *f.return_code < 0) {
    rec.signal = -*f.return_code;
    rec.exit_code.reset();
  }
  return out;
}

}  // namespace

int import_logs(const fs::path& log_dir, const fs::path& db_path, const std::string& suite_name) {
  LogFolder folder = walk_log_folder(log_dir);
  OverallLog log = read_run_log(log_dir, folder.overall);
  const PerFileLogIndex index(std::move(folder.per_file));
  std::string series = suite_name;
  if (series.empty()) series = log.project;
  if (series.empty()) series = series_of(log.path);
  const Suite suite = imported_suite(series, log, log_dir);

  Store store(db_path);
  const std::vector<std::string> planned = planned_files(log);
  std::vector<std::string>().swap(log.found);  // in planned now
  const std::int64_t id = store.begin_run(imported_run(series, log, log_dir), planned);
  const Unfinished unfinished = unfinished_files(planned, log, index);

  // The logs are read and parsed on the other cores while this thread writes, in the overall
  // log's order: all files in one transaction, statements prepared once; the run's end in it too.
  std::vector<const FinishedLine*> files;
  files.reserve(log.finished.size() + unfinished.files.size());
  const std::vector<FinishedLine>* const finished_then_unfinished[] = {&log.finished,
                                                                       &unfinished.files};
  for (const auto* lines : finished_then_unfinished) {
    for (const FinishedLine& f : *lines) files.push_back(&f);
  }
  Store::FileWriter writer(store, id);
  bool any_failure = false;
  std::size_t parsed = 0;
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  make_in_parallel_use_in_order<ImportedFile>(
      files.size(), std::min(cores - 1, kMaxParseThreads), kParseAhead,
      [&](std::size_t i) { return import_file(*files[i], suite, log_dir, log.project, index); },
      [&](ImportedFile file) {
        if (file.record.parsed_from == "log") ++parsed;
        any_failure = any_failure || is_failure(*file.record.status);
        writer.add(file.record, file.cases);
      });
  store.finish_run(id,
                   unfinished.interrupted ? "interrupted"
                   : any_failure          ? "failed"
                                          : "passed",
                   iso8601_utc_now());
  writer.commit();
  fmt::print("runner: imported {} as run {} of suite {}: {} files, {} with a per-file log\n",
             log_dir.string(), id, series, log.finished.size(), parsed);
  return kExitOk;
}

}  // namespace devshim
