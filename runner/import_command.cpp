#include "runner/import_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

#include "parsers/line_reader.h"
#include "parsers/pytest_text.h"
#include "parsers/unittest_parser.h"
#include "runner/error.h"
#include "runner/store.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

FileStatus status_word(std::string_view word) {
  const std::string w = upper(trim(word));
  if (w == "PASSED" || w == "PASS" || w == "SUCCESS" || w == "OK") return FileStatus::kPassed;
  if (w == "FAILED" || w == "FAIL" || w == "FAILURE") return FileStatus::kFailed;
  if (w == "TIMEOUT" || w == "TIMED OUT" || w == "TIMED_OUT") return FileStatus::kTimeout;
  if (w == "CRASHED" || w == "CRASH" || w == "SEGFAULT") return FileStatus::kCrashed;
  if (w == "SKIPPED" || w == "NO TESTS" || w == "NO_TESTS") return FileStatus::kNoTests;
  if (w == "INTERRUPTED") return FileStatus::kInterrupted;
  return FileStatus::kError;
}

// "tests.utils.test_x" → "tests/utils/test_x.py"; paths stay as they are.
std::string module_path(const std::string& module) {
  if (module.size() > 3 && module.substr(module.size() - 3) == ".py") return module;
  std::string p = module;
  std::replace(p.begin(), p.end(), '.', '/');
  return p + ".py";
}

}  // namespace

std::optional<FinishedLine> parse_finished_line(std::string_view line) {
  constexpr std::string_view kMarker = "Finished test: ";
  auto at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kMarker.size());
  auto status_at = rest.find(" - Status: ");
  if (status_at == std::string_view::npos) return std::nullopt;
  FinishedLine f;
  f.module = std::string(trim(rest.substr(0, status_at)));
  rest = rest.substr(status_at + 11);
  auto rc_at = rest.find("(RC:");
  auto dur_at = rest.find("Duration:");
  f.status = status_word(rest.substr(0, std::min(rc_at, dur_at)));
  if (rc_at != std::string_view::npos) {
    std::string_view rc = trim(rest.substr(rc_at + 4));
    int n = 0;
    if (std::from_chars(rc.data(), rc.data() + rc.size(), n).ec == std::errc()) f.return_code = n;
  }
  if (dur_at != std::string_view::npos) {
    std::string d(trim(rest.substr(dur_at + 9)));
    try {
      f.duration_s = std::stod(d);
    } catch (const std::exception&) {
      f.duration_s = 0;
    }
  }
  return f;
}

int import_logs(const fs::path& log_dir, const fs::path& db_path, const std::string& suite_name) {
  std::error_code ec;
  if (!fs::is_directory(log_dir, ec)) {
    throw UsageError(fmt::format("{}: no such folder", log_dir.string()));
  }
  // The overall log: a *.log directly in LOGDIR with "Finished test:" lines; per-file logs are
  // the *.py.log files anywhere below.
  std::vector<fs::path> overall;
  std::map<std::string, fs::path> per_file;  // relative path without ".log" → file
  for (auto it = fs::recursive_directory_iterator(log_dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string name = it->path().filename().string();
    if (name.size() > 7 && name.substr(name.size() - 7) == ".py.log") {
      per_file[it->path().lexically_relative(log_dir).generic_string()] = it->path();
    } else if (name.size() > 4 && name.substr(name.size() - 4) == ".log" &&
               it->path().parent_path() == log_dir) {
      overall.push_back(it->path());
    }
  }
  std::sort(overall.begin(), overall.end());
  std::vector<FinishedLine> finished;
  fs::path overall_log;
  for (const auto& candidate : overall) {
    LineReader lines(candidate);
    std::string_view line;
    std::vector<FinishedLine> found;
    while (lines.next(line)) {
      if (auto f = parse_finished_line(line)) found.push_back(std::move(*f));
    }
    if (!found.empty()) {
      finished = std::move(found);
      overall_log = candidate;
    }
  }
  if (finished.empty()) {
    throw UsageError(
        fmt::format("{}: no overall log with \"Finished test:\" lines found", log_dir.string()));
  }
  std::string series = suite_name;
  if (series.empty()) {
    series = overall_log.stem().string();
    if (auto us = series.find('_'); us != std::string::npos && us > 0) series.resize(us);
  }

  Store store(db_path);
  RunRecord run;
  run.suite = series;
  run.suite_file = overall_log.string();
  run.framework = "imported";
  run.command_line = {"runner", "import", log_dir.string()};
  run.started_at = iso8601_utc_now();
  run.project_root = log_dir.string();
  run.tests_dir = ".";
  run.out_dir = fs::absolute(log_dir).string();
  std::vector<std::string> planned;
  planned.reserve(finished.size());
  for (const auto& f : finished) planned.push_back(module_path(f.module));
  std::sort(planned.begin(), planned.end());
  planned.erase(std::unique(planned.begin(), planned.end()), planned.end());
  const std::int64_t id = store.begin_run(run, planned);

  bool any_failure = false;
  std::size_t parsed = 0;
  for (const FinishedLine& f : finished) {
    const std::string rel = module_path(f.module);
    FileRecord rec;
    rec.path = rel;
    rec.status = f.status;
    rec.exit_code = f.return_code;
    rec.duration_s = f.duration_s;
    rec.timed_out = f.status == FileStatus::kTimeout;
    any_failure = any_failure || is_failure(f.status);
    std::vector<TestCase> cases;
    // The per-file log whose path ends with this file's path.
    for (const auto& [key, path] : per_file) {
      const std::string want = rel + ".log";
      if (key == want || (key.size() > want.size() &&
                          key.compare(key.size() - want.size(), want.size(), want) == 0 &&
                          key[key.size() - want.size() - 1] == '/')) {
        rec.log_path = key;
        LineReader probe(path);
        std::string_view line;
        bool pytest = false;
        for (int i = 0; i < 20 && probe.next(line); ++i) {
          pytest = pytest || line.find("test session starts") != std::string_view::npos;
        }
        LineReader lines(path);
        ParsedFile pf = pytest ? parse_pytest_text(lines) : parse_unittest_log(lines, rel);
        cases = std::move(pf.cases);
        rec.reported = pf.reported;
        rec.parsed_from = "log";
        ++parsed;
        break;
      }
    }
    store.record_file(id, rec, cases);
  }
  store.finish_run(id, any_failure ? "failed" : "passed", iso8601_utc_now());
  fmt::print("runner: imported {} as run {} of suite {}: {} files, {} with a per-file log\n",
             log_dir.string(), id, series, finished.size(), parsed);
  return kExitOk;
}

}  // namespace devshim
