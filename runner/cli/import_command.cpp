#include "runner/cli/import_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <thread>

#include "parsers/line_reader.h"
#include "parsers/pytest_text.h"
#include "parsers/text.h"
#include "runner/base/error.h"
#include "runner/base/in_order.h"
#include "runner/engine/collect.h"
#include "runner/engine/process_pool.h"
#include "runner/engine/suite.h"
#include "runner/results/store.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

FileStatus status_word(std::string_view word, std::optional<int> return_code) {
  const std::string w = upper(trim(word));
  if (w == "PASSED" || w == "PASS" || w == "SUCCESS" || w == "OK") return FileStatus::kPassed;
  if (w == "FAILED" || w == "FAIL" || w == "FAILURE") return FileStatus::kFailed;
  if (w == "TIMEOUT" || w == "TIMED OUT" || w == "TIMED_OUT") return FileStatus::kTimeout;
  if (w == "CRASHED" || w == "CRASH" || w == "SEGFAULT") return FileStatus::kCrashed;
  if (w == "SKIPPED" || w == "NO TESTS" || w == "NO_TESTS") return FileStatus::kNoTests;
  if (w == "INTERRUPTED") return FileStatus::kInterrupted;
  // TorchDevice's word for a negative return code: the process was killed by a signal.
  if (w == "CRITICAL_FAILURE" && return_code && *return_code < 0) return FileStatus::kCrashed;
  return FileStatus::kError;
}

// "tests.utils.test_x" → "tests/utils/test_x.py"; paths stay as they are.
std::string module_path(const std::string& module) {
  if (module.ends_with(".py")) return module;
  std::string p = module;
  std::replace(p.begin(), p.end(), '.', '/');
  return p + ".py";
}

std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
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

// What the overall log says about the whole run.
struct OverallLog {
  fs::path path;
  std::vector<FinishedLine> finished;
  std::vector<std::string> found;  // "Found N test files to run:" then "  - tests/x.py" each
  std::string project_root;        // "Target project repo: PATH"
  std::string project;  // its folder name, else that of "Log directory for individual tests:"
};

OverallLog read_overall_log(const fs::path& path) {
  OverallLog out;
  out.path = path;
  LineReader lines(path);
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

// The series name of an overall log: its name up to the first '_'
// ("transformers_20250501_100000.log" → "transformers").
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

namespace {

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
    f.status = FileStatus::kInterrupted;
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
  rec.status = f.status;
  rec.exit_code = f.return_code;
  rec.duration_s = f.duration_s;
  rec.timed_out = f.status == FileStatus::kTimeout;
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
      result.timed_out = f.status == FileStatus::kTimeout;
      result.interrupted = f.status == FileStatus::kInterrupted;
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
