#include "runner/run_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "runner/collect.h"
#include "runner/device_probe.h"
#include "runner/discovery.h"
#include "runner/environment_probe.h"
#include "runner/error.h"
#include "runner/gap_log.h"
#include "runner/launch_plan.h"
#include "runner/process_pool.h"
#include "runner/process_reaper.h"
#include "runner/progress.h"
#include "runner/redirection_record.h"
#include "runner/rerun.h"
#include "runner/resume.h"
#include "runner/run_log.h"
#include "runner/schedule.h"
#include "runner/sqlite.h"
#include "runner/status.h"
#include "runner/store.h"
#include "runner/suite.h"

#ifndef DEVSHIM_SOURCE_SHIM_DIR
#define DEVSHIM_SOURCE_SHIM_DIR ""
#endif

namespace devshim {

namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::string local_stamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y%m%d-%H%M%S", &tm);
  return buf.data();
}

// Creates the run's output folder; a fresh, unique one under the default root.
fs::path prepare_out_dir(const RunOptions& o, const Suite& suite) {
  fs::path dir;
  std::error_code ec;
  if (o.out_dir) {
    dir = fs::absolute(*o.out_dir);
  } else {
    fs::path base = fs::absolute(default_out_root()) / suite.name /
                    (local_stamp() + (o.shim ? "" : "-baseline"));
    dir = base;
    for (int i = 2; fs::exists(dir, ec); ++i) dir = base.string() + "-" + std::to_string(i);
  }
  dir = dir.lexically_normal();
  fs::create_directories(dir / "logs", ec);
  if (ec || ::access(dir.c_str(), W_OK) != 0) {
    throw UsageError(fmt::format("output folder {} is not writable: {}", dir.string(),
                                 ec ? ec.message() : std::string("permission denied")));
  }
  return dir;
}

// Why a file ended as it did, when its status alone does not say. Python ignores SIGXFSZ, so a
// process that hit the file size limit is recognised by its log having reached the limit.
std::string describe(const ProcessResult& r, std::uint64_t max_file_bytes, const fs::path& log) {
  if (!r.launch_error.empty()) return r.launch_error;
  std::error_code ec;
  if (max_file_bytes > 0 && fs::file_size(log, ec) >= max_file_bytes && !ec) {
    return fmt::format("log reached the file size limit of {} MiB (--max-log-mb)",
                       max_file_bytes >> 20U);
  }
  if (r.timed_out) return "killed after the timeout";
  if (r.interrupted) return "killed: run interrupted";
  if (r.exit_code && *r.exit_code != 0 && fs::file_size(log, ec) == 0 && !ec) {
    return "the log is empty: the process wrote nothing (were its stdout and stderr closed?)";
  }
  if (r.signal) {
    std::string s = "killed by " + signal_name(*r.signal);
    if (*r.signal == SIGXFSZ && max_file_bytes > 0) {
      s += fmt::format(" (file size limit of {} MiB reached: --max-log-mb)", max_file_bytes >> 20U);
    }
    return s;
  }
  return "";
}

class RunObserver : public PoolObserver {
 public:
  RunObserver(const std::vector<TestFile>& files, const std::vector<ProcessSpec>& specs,
              const Suite& suite, const fs::path& out_dir, Store& store, std::int64_t run_id,
              RunLog& log, Progress& progress, std::uint64_t max_file_bytes)
      : files_(files),
        specs_(specs),
        suite_(suite),
        out_dir_(out_dir),
        store_(store),
        run_id_(run_id),
        log_(log),
        progress_(progress),
        max_file_bytes_(max_file_bytes) {}

  void on_start(std::size_t i) override {
    log_.line("Started test: " + files_[i].rel_path);
    progress_.started(files_[i].rel_path);
  }

  void on_finish(std::size_t i, const ProcessResult& r) override {
    CollectedFile collected = collect_results(suite_, files_[i], specs_[i], r);
    const FileStatus status = collected.status;
    ++counts_[status];
    for (const TestCase& c : collected.cases) ++case_counts_[c.status];
    FileRecord rec;
    rec.path = files_[i].rel_path;
    rec.status = status;
    rec.exit_code = r.exit_code;
    rec.signal = r.signal;
    rec.timed_out = r.timed_out;
    rec.duration_s = r.duration_s;
    rec.log_path = specs_[i].log_path.lexically_relative(out_dir_).generic_string();
    rec.started_at = iso8601_utc(r.started_at);
    rec.finished_at = iso8601_utc(r.finished_at);
    rec.note = describe(r, max_file_bytes_, specs_[i].log_path);
    rec.parsed_from = collected.parsed_from;
    rec.reported = collected.reported;
    RecordRead record;
    if (auto it = specs_[i].env.find(kRecordVar); it != specs_[i].env.end()) {
      record = read_redirection_record(it->second, suite_.project_root);
      if (!record.error.empty()) {
        rec.note +=
            (rec.note.empty() ? "" : "; ") + ("redirection record unusable: " + record.error);
      }
    }
    pending_.push_back({rec, std::move(collected.cases), std::move(record.entries)});
    flush();

    std::string rc = r.exit_code ? std::to_string(*r.exit_code)
                     : r.signal  ? "-" + std::to_string(*r.signal)
                                 : std::string("none");
    log_.line(fmt::format("Finished test: {} - Status: {} (RC: {}) Duration: {:.2f}s{}", rec.path,
                          to_string(status), rc, r.duration_s,
                          rec.note.empty() ? "" : " - " + rec.note));
    progress_.finished(rec.path, status, r.duration_s, specs_[i].log_path.string(), rec.note);
  }

  void on_tick() override {
    if (!pending_.empty()) flush();
    progress_.tick();
  }

  /// Records the finished files not recorded yet, oldest first. A database locked past its busy
  /// timeout keeps them waiting in memory (false); the next file or tick tries again.
  bool flush() {
    while (!pending_.empty()) {
      const Pending& p = pending_.front();
      try {
        store_.record_file(run_id_, p.file, p.cases, p.redirections);
      } catch (const sql::BusyError& e) {
        if (!warned_locked_) {
          warned_locked_ = true;
          log_.line(std::string("Database locked, results kept in memory until it is free: ") +
                    e.what());
          std::fprintf(stderr, "runner: warning: %s; results wait in memory\n", e.what());
        }
        return false;
      }
      pending_.pop_front();
    }
    return true;
  }
  std::size_t unrecorded() const { return pending_.size(); }

  void on_interrupt(int signo) override {
    log_.line("Interrupted by " + signal_name(signo) + ": stopping the running files");
  }

  const std::map<FileStatus, std::size_t>& counts() const { return counts_; }
  const std::map<CaseStatus, std::size_t>& case_counts() const { return case_counts_; }

 private:
  const std::vector<TestFile>& files_;
  const std::vector<ProcessSpec>& specs_;
  const Suite& suite_;
  fs::path out_dir_;
  Store& store_;
  std::int64_t run_id_;
  RunLog& log_;
  Progress& progress_;
  std::uint64_t max_file_bytes_;
  std::map<FileStatus, std::size_t> counts_;
  std::map<CaseStatus, std::size_t> case_counts_;
  struct Pending {
    FileRecord file;
    std::vector<TestCase> cases;
    std::vector<Redirection> redirections;
  };
  std::deque<Pending> pending_;
  bool warned_locked_ = false;
};

std::size_t failing_files(const std::map<FileStatus, std::size_t>& counts) {
  std::size_t n = 0;
  for (const auto& [status, count] : counts) n += is_failure(status) ? count : 0;
  return n;
}

// What makes an earlier run comparable with this one (Store::comparable_run).
RunRecord comparable_key(const Suite& suite, const RunOptions& o,
                         const std::optional<Shard>& shard) {
  RunRecord r;
  r.suite = suite.name;
  r.targets = o.targets;
  r.mode = o.shim ? "shim" : "baseline";
  r.shard = shard ? shard_text(*shard) : "";
  return r;
}

// --list with a shard: its files, planned with the durations of the database when it exists
// (the same plan the run would make), in path order.
std::vector<TestFile> list_shard(const std::vector<TestFile>& files, const Shard& shard,
                                 const Suite& suite, const RunOptions& o) {
  const fs::path db = fs::absolute(o.db_path.value_or(default_db_path()));
  std::map<std::string, double> recorded;
  std::error_code ec;
  if (fs::exists(db, ec)) recorded = Store(db).durations(suite.name);
  std::vector<TestFile> out = schedule_files(files, recorded, shard).files;
  std::sort(out.begin(), out.end(),
            [](const TestFile& a, const TestFile& b) { return a.rel_path < b.rel_path; });
  return out;
}

}  // namespace

fs::path default_db_path() {
  if (const char* db = std::getenv("DEVSHIM_DB"); db != nullptr && *db != '\0') return db;
  std::string data = env_or("XDG_DATA_HOME", "");
  if (data.empty()) data = env_or("HOME", ".") + "/.local/share";
  return fs::path(data) / "devshim" / "results.db";
}

fs::path default_out_root() { return env_or("DEVSHIM_OUT", "devshim-out"); }

fs::path default_shim_dir() { return env_or("DEVSHIM_SHIM_DIR", DEVSHIM_SOURCE_SHIM_DIR); }

int run_suite(const RunOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  RunOptions o = options;
  const Suite suite = load_suite(o.suite);
  // --resume: the run's own targets, mode and folder; only its unfinished files (runner/resume.h).
  std::optional<Store> resume_store;
  std::optional<ResumePlan> resume;
  if (!o.resume.empty()) {
    resume_store.emplace(fs::absolute(o.db_path.value_or(default_db_path())));
    resume = plan_resume(*resume_store, suite, o.resume);
    o.targets = resume->run.targets;
    o.shim = resume->run.mode == "shim";
    o.out_dir = resume->run.out_dir;
    o.baseline_run = resume->run.baseline_run;
    o.previous_run = resume->run.previous_run;
    o.shard.clear();  // the run's files are its shard's already
    o.shard_total = 0;
  }
  std::vector<TestFile> files = resume ? resume->files : discover_test_files(suite, o.targets);
  const std::optional<Shard> shard =
      resume ? std::nullopt : resolve_shard(o.shard, o.shard_total, inherited_environment());
  const double discovery_s = std::chrono::duration<double>(Clock::now() - started).count();

  if (o.list_only) {
    if (shard) files = list_shard(files, *shard, suite, o);
    for (const auto& f : files) std::printf("%s\n", f.rel_path.c_str());
    return kExitOk;
  }

  LaunchOptions launch;
  launch.shim = o.shim;
  // A --python path is relative to where the runner was started, not to the project root.
  launch.python = o.python.find('/') != std::string::npos
                      ? fs::absolute(o.python).lexically_normal().string()
                      : o.python;
  launch.shim_dir = fs::absolute(o.shim_dir.value_or(default_shim_dir())).lexically_normal();
  if (o.shim && !fs::exists(launch.shim_dir / "sitecustomize.py")) {
    throw UsageError(
        fmt::format("shim folder {} has no sitecustomize.py (set --shim-dir or "
                    "DEVSHIM_SHIM_DIR)",
                    launch.shim_dir.string()));
  }
  const Environment env = child_environment(suite, launch, inherited_environment());
  // The interpreter is looked up once; every file's argv then names it by its path.
  const std::string python = launch.python.empty() ? suite.python : launch.python;
  // GoogleTest binaries need no Python: for them a missing interpreter only means no probe.
  std::string interpreter = find_executable(python, env);
  if (interpreter.empty() || ::access(interpreter.c_str(), X_OK) != 0) {
    if (suite.framework != Framework::kGtest) {
      throw UsageError(
          fmt::format("python interpreter \"{}\" not found or not executable (\"python\" "
                      "of {}, or --python)",
                      python, suite.file.string()));
    }
    interpreter.clear();
  } else {
    launch.python = interpreter;
  }
  if (files.empty() && !resume) {
    throw UsageError(fmt::format("no test files matching \"{}\" in the targets given under {}",
                                 suite.pattern, suite.tests_root().string()));
  }

  const fs::path out_dir = prepare_out_dir(o, suite);
  launch.logs_dir = out_dir / "logs";
  RunLog run_log(out_dir / "run.log", /*append=*/resume.has_value());
  if (!resume_store) resume_store.emplace(fs::absolute(o.db_path.value_or(default_db_path())));
  Store& store = *resume_store;
  // Forks its watchdog: before any thread starts (the probes below run in threads).
  ProcessReaper reaper;

  // Longest first by recorded durations, this shard's share only (runner/schedule.h).
  const RunRecord comparable = comparable_key(suite, o, shard);
  std::int64_t previous_run = o.previous_run;
  if (previous_run == 0 && !resume) {
    if (auto p = store.comparable_run(comparable)) previous_run = p->id;
  }
  std::set<std::string> failed_before;
  if (o.failed_first && previous_run > 0) {
    for (const auto& f : store.files(previous_run)) {
      if (f.status && is_failure(*f.status)) failed_before.insert(f.path);
    }
  }
  Schedule schedule = schedule_files(files, store.durations(suite.name), shard, failed_before);
  files = std::move(schedule.files);
  if (auto status_file = inherited_environment().find("TEST_SHARD_STATUS_FILE");
      shard && status_file != inherited_environment().end() && !status_file->second.empty()) {
    std::FILE* touched = std::fopen(status_file->second.c_str(), "a");  // Bazel: "we shard"
    if (touched != nullptr) std::fclose(touched);
  }

  const int jobs =
      o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const double timeout_s = o.timeout_s.value_or(suite.timeout_s);

  std::vector<ProcessSpec> specs;
  std::vector<std::string> planned;
  specs.reserve(files.size());
  // One copy of the environment for every file; each spec holds only what is its own.
  const auto shared_env = std::make_shared<const Environment>(env);
  for (const auto& f : files) {
    // launch.python is an absolute path here, so planning needs no PATH from the environment.
    ProcessSpec spec = plan_process(suite, launch, Environment{}, f);
    spec.base_env = shared_env;
    if (o.shim) {
      // Each file's shim writes which requests it redirected (runner/redirection_record.h).
      fs::path record = spec.log_path;
      record += ".redirections.json";
      std::error_code ec;
      fs::remove(record, ec);  // an earlier run's record in a reused --out is not this run's
      spec.env[kRecordVar] = record.string();
    }
    specs.push_back(std::move(spec));
    planned.push_back(f.rel_path);
  }

  RunRecord run = resume ? resume->run : RunRecord{};
  run.suite = suite.name;
  run.suite_file = suite.file.string();
  run.framework = framework_name(suite.framework);
  run.targets = o.targets;
  run.command_line = o.command_line;
  run.mode = o.shim ? "shim" : "baseline";
  if (!resume) run.started_at = iso8601_utc_now();
  run.project_root = suite.project_root.string();
  run.tests_dir = suite.tests_dir;
  std::string git_toplevel;
  if (auto head = capture_output({"git", "rev-parse", "HEAD", "--show-toplevel"},
                                 suite.project_root, std::chrono::seconds(10))) {
    std::istringstream lines(*head);
    std::getline(lines, run.project_commit);
    std::getline(lines, git_toplevel);
  }
  run.out_dir = out_dir.string();
  run.source_url = suite.source_url;
  run.baseline_run = o.baseline_run;
  run.previous_run = previous_run;
  if (!resume) {
    run.shard = comparable.shard;
    run.shard_plan = schedule.shard_plan;
  }
  // The interpreter's probe imports torch (seconds): it runs beside the tests.
  std::future<std::string> environment =
      interpreter.empty()
          ? std::async(std::launch::deferred,
                       [] {
                         return nlohmann::json{
                             {"python", nullptr},
                             {"cores", std::max(1U, std::thread::hardware_concurrency())},
                             {"runner_version", DEVSHIM_VERSION}}
                             .dump();
                       })
          : std::async(std::launch::async, probe_environment, interpreter, env, suite.project_root);
  // And LibTorch's view of the hardware, from devshim-probe (the runner does not link LibTorch).
  std::future<nlohmann::json> device_probe = std::async(
      std::launch::async, [&env] { return run_device_probe(env, std::chrono::seconds(60)); });
  run.jobs = jobs;
  run.timeout_s = timeout_s;
  std::int64_t run_id = 0;
  if (resume) {
    run_id = run.id;
    if (!store.claim_run(run_id)) {
      throw UsageError(fmt::format("run {} is being resumed by another runner", run_id));
    }
  } else {
    run_id = store.begin_run(run, planned);
  }

  const std::string shard_note = run.shard.empty() ? "" : " (shard " + run.shard + ")";
  if (resume) {
    run_log.line(fmt::format(
        "Run {} resumed: {} of its {} files left to run, -j {}, timeout {}s, database {}", run_id,
        files.size(), resume->planned, jobs, timeout_s, store.path().string()));
    for (const std::string& path : resume->missing) {
      // Recorded as an error, so that the run can complete and says what happened.
      FileRecord gone;
      gone.path = path;
      gone.status = FileStatus::kError;
      gone.note = fmt::format("not in the suite any more when run {} was resumed", run_id);
      gone.started_at = gone.finished_at = iso8601_utc_now();
      store.record_file(run_id, gone);
      run_log.line("Finished test: " + path + " - Status: error - " + gone.note);
      std::fprintf(stderr, "runner: warning: %s is no longer in the suite: recorded as error\n",
                   path.c_str());
    }
  } else {
    run_log.line(
        fmt::format("Run {} of suite {}{} ({} mode): {} files, -j {}, timeout {}s, "
                    "database {}",
                    run_id, suite.name, shard_note, run.mode, files.size(), jobs, timeout_s,
                    store.path().string()));
  }

  // For suites of many files: what finding and planning them cost (docs/reliability.md#scale).
  run_log.line(fmt::format("Discovered {} files in {:.2f}s; ready to start after {:.2f}s",
                           files.size(), discovery_s,
                           std::chrono::duration<double>(Clock::now() - started).count()));

  PoolOptions pool_options;
  pool_options.jobs = jobs;
  pool_options.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  pool_options.kill_grace = std::chrono::milliseconds(static_cast<long>(o.kill_grace_s * 1000));
  pool_options.max_file_bytes = static_cast<std::uint64_t>(o.max_log_mb * 1024 * 1024);
  pool_options.reaper = &reaper;

  Progress progress(stdout, TerminalInfo::detect(stdout), files.size());
  std::printf("runner: run %lld%s: %zu file%s of %s%s, %d at once, %s -> %s\n",
              static_cast<long long>(run_id), resume ? " resumed" : "", files.size(),
              files.size() == 1 ? "" : "s", suite.name.c_str(), shard_note.c_str(), jobs,
              o.shim ? "shim on" : "shim off (baseline)", out_dir.c_str());
  std::fflush(stdout);
  RunObserver observer(files, specs, suite, out_dir, store, run_id, run_log, progress,
                       pool_options.max_file_bytes);
  bool completed = ProcessPool(pool_options).run(specs, observer);
  progress.close();
  // Results that waited for a locked database: a last try each busy timeout, three times.
  for (int attempt = 0; attempt < 3 && !observer.flush(); ++attempt) {
  }
  if (observer.unrecorded() > 0) {
    throw sql::BusyError(fmt::format(
        "{}: the database stayed locked: {} finished file{} of run {} could not be recorded "
        "(their logs are in {}); once it is free, `runner {} --resume {}` runs them again",
        store.path().string(), observer.unrecorded(), observer.unrecorded() == 1 ? "" : "s", run_id,
        (out_dir / "logs").string(), o.suite.string(), run_id));
  }

  std::map<FileStatus, std::size_t> file_counts = observer.counts();
  std::map<CaseStatus, std::size_t> case_counts = observer.case_counts();
  // A resumed run also reruns the failures of its earlier sessions that were not rerun yet.
  const bool reran =
      completed && o.rerun_failures > 0 && (resume || failing_files(file_counts) > 0);
  if (reran) {
    RerunOptions rerun{o.rerun_failures, pool_options, out_dir};
    completed = rerun_failures(suite, launch, env, resume ? resume->run_files : files, store,
                               run_id, run_log, rerun);
  }
  std::size_t planned_files = files.size();
  if (reran || resume) {
    // The whole run's counts: a resumed run's earlier files and the reruns' verdicts included.
    file_counts.clear();
    planned_files = 0;
    for (const auto& f : store.files(run_id)) {
      ++planned_files;
      if (f.status) ++file_counts[*f.status];
    }
    case_counts = store.case_counts(run_id);
  }

  std::size_t failures = 0;
  std::string summary;
  for (const auto& [status, n] : file_counts) {
    if (is_failure(status)) failures += n;
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, to_string(status));
  }
  std::size_t finished = 0;
  for (const auto& [status, n] : file_counts) finished += n;
  if (finished < planned_files) {
    summary += fmt::format("{}{} not run", summary.empty() ? "" : ", ", planned_files - finished);
  }
  const std::string run_status = !completed ? "interrupted" : failures > 0 ? "failed" : "passed";
  {
    // The probe's findings, plus where the git checkout starts (for upstream links' {path}).
    nlohmann::json env_json = nlohmann::json::parse(environment.get());
    if (!git_toplevel.empty()) env_json["git_toplevel"] = git_toplevel;
    env_json["device_probe"] = device_probe.get();
    store.set_environment(run_id, env_json.dump());
  }
  store.finish_run(run_id, run_status, iso8601_utc_now());
  try {
    GapLog(store).update_from_run(run_id);  // the API gap log (docs/gaps.md)
  } catch (const Error& e) {
    std::fprintf(stderr, "runner: error: gap log not updated: %s\n", e.what());
  }
  std::string tests;
  std::size_t total_tests = 0;
  for (const auto& [status, n] : case_counts) {
    total_tests += n;
    tests += fmt::format(", {} {}", n, to_string(status));
  }
  tests = fmt::format("{} test{}{}", total_tests, total_tests == 1 ? "" : "s", tests);
  run_log.line(fmt::format("Run {} {}: files: {}; tests: {}", run_id, run_status, summary, tests));

  std::printf("runner: run %lld %s: %zu file%s: %s\n", static_cast<long long>(run_id),
              run_status.c_str(), planned_files, planned_files == 1 ? "" : "s", summary.c_str());
  std::printf("runner: %s\n", tests.c_str());
  std::vector<fs::path> reports;
  if (o.on_recorded) {
    try {
      reports = o.on_recorded(store, run_id, out_dir);
    } catch (const Error& e) {
      // The results are safe in the database; `runner report` can redo the reports.
      std::fprintf(stderr, "runner: error: reports not written: %s\n", e.what());
    }
  }
  for (const auto& report : reports) std::printf("runner: report  %s\n", report.c_str());
  std::printf("runner: logs    %s\n", (out_dir / "logs").c_str());
  std::printf("runner: run log %s\n", (out_dir / "run.log").c_str());
  std::printf("runner: results %s (run %lld)\n", store.path().c_str(),
              static_cast<long long>(run_id));
  std::fflush(stdout);
  if (!completed) return kExitInterrupted;
  return failures > 0 ? kExitFailures : kExitOk;
}

}  // namespace devshim
