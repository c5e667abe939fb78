#include "runner/engine/run_steps.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "base/error.h"
#include "runner/engine/continuation.h"
#include "runner/engine/frameworks/framework_traits.h"
#include "runner/engine/install_layout.h"
#include "runner/engine/interpreter_check.h"
#include "runner/engine/interrupt.h"
#include "runner/engine/python_imports.h"
#include "runner/engine/rerun.h"
#include "runner/engine/run_observer.h"
#include "runner/engine/schedule.h"
#include "runner/engine/trial.h"
#include "runner/results/gap_log.h"
#include "runner/results/redirection_record.h"
#include "runner/results/run_folder.h"
#include "runner/results/sqlite.h"
#include "runner/results/status.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

// Creates the run's output folder; a fresh, unique one under the default root.
fs::path prepare_out_dir(const RunOptions& o, const Suite& suite) {
  fs::path dir;
  std::error_code ec;
  if (o.out_dir) {
    dir = fs::absolute(*o.out_dir);
  } else {
    fs::path base = fs::absolute(default_out_root(o.environment)) / suite.name /
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

// What makes an earlier run comparable with this one (Store::comparable_run); env is the test
// processes' environment, whose TORCHDEVICE_POLICY picks the shim's policy.
RunRecord comparable_key(const Suite& suite, const RunOptions& o, const std::optional<Shard>& shard,
                         const Environment& env) {
  RunRecord r;
  r.suite = suite.name;
  r.targets = o.targets;
  r.mode = o.shim ? "shim" : "baseline";
  r.shard = shard ? shard_text(*shard) : "";
  if (o.shim) {
    const auto policy = env.find(kPolicyVar);
    r.policy = policy == env.end() || policy->second.empty() ? "default" : policy->second;
  }
  return r;
}

// The packages each file imports (runner/engine/python_imports.h), with those of the
// conftest.py files pytest loads for it (in its folder and those above, up to the project root).
std::vector<std::set<std::string>> files_imports(const Suite& suite,
                                                 const std::vector<TestFile>& files) {
  std::map<fs::path, std::set<std::string>> conftests;  // by folder
  const auto conftest_of = [&](const fs::path& dir) -> const std::set<std::string>& {
    auto [it, added] = conftests.try_emplace(dir);
    if (added) it->second = imported_packages(dir / "conftest.py");
    return it->second;
  };
  const fs::path root = suite.project_root.lexically_normal();
  std::vector<std::set<std::string>> out;
  out.reserve(files.size());
  for (const TestFile& f : files) {
    std::set<std::string> imports = imported_packages(f.abs_path);
    if (suite.framework == Framework::kPytest) {
      for (fs::path dir = f.abs_path.parent_path().lexically_normal();; dir = dir.parent_path()) {
        const auto& more = conftest_of(dir);
        imports.insert(more.begin(), more.end());
        if (dir == root || !dir.has_parent_path() || dir == dir.parent_path() ||
            !dir.string().starts_with(root.string())) {
          break;
        }
      }
    }
    out.push_back(std::move(imports));
  }
  return out;
}

// The warm parent of a Python suite's warm start (a zygote, runner/engine/zygote.h): the
// interpreter, the environment and the folder a cold test process gets; the framework and the
// suite's preloads;
// torch and torch._dynamo (when there: torch imports it lazily, 1.8 s here, on the first
// optimizer step, checkpoint or DataLoader, which then each child would pay) when a file imports
// torch: a suite that never does would pay their seconds for nothing. Unset with --cold, for
// GoogleTest suites, without an interpreter and on a platform without warm start
// (warm_start_refusal).
std::optional<WarmStartOptions> warm_start(const RunPlan& plan, const Environment& env,
                                           const std::vector<std::set<std::string>>& imports) {
  const RunOptions& o = plan.options;
  if (!o.warm || !framework_traits(plan.suite.framework).runs_python() ||
      plan.interpreter.empty() || !warm_start_refusal().empty()) {
    return std::nullopt;
  }
  WarmStartOptions z;
  z.script = zygote_script(o.environment);
  z.python = fs::absolute(plan.interpreter).string();  // it starts in the project root
  z.env.reserve(env.size());
  for (const auto& [name, value] : env) z.env.push_back(fmt::format("{}={}", name, value));
  z.cwd = plan.suite.project_root;
  const bool torch = std::any_of(imports.begin(), imports.end(),
                                 [](const auto& names) { return names.count("torch") > 0; });
  if (torch) z.preload = {"?torch", "?torch._dynamo"};
  z.preload.push_back(framework_name(plan.suite.framework));
  z.preload.insert(z.preload.end(), plan.suite.preload.begin(), plan.suite.preload.end());
  z.log_path = plan.out_dir / (o.shim ? "zygote-shim.log" : "zygote-baseline.log");
  return z;
}

// Whether a file waits for its zygote to be ready rather than start cold while it imports: when
// the file imports one of the packages it preloads besides the framework (a cold start would
// import it again), or when it preloads nothing else (it is ready in a moment).
bool waits_for_warm(const WarmStartOptions& zygote, const std::set<std::string>& imports,
                    Framework framework) {
  const std::string own = framework_name(framework);
  bool others = false;
  for (const std::string& m : zygote.preload) {
    const std::string package = top_level_package(m);
    if (package == own) continue;
    if (imports.count(package) > 0) return true;
    others = true;
  }
  return !others;
}

// The options given with --resume that differ from what the run recorded ("--out (the run's:
// X)"), for the error that refuses them; options equal to the run's own are accepted, so that
// `cmd || cmd --resume latest` works.
std::vector<std::string> conflicts_with_run(const RunOptions& o, const RunRecord& run) {
  std::vector<std::string> conflicts;
  const auto given = [&](const char* option) { return o.given.count(option) > 0; };
  if (given("targets") && o.targets != run.targets) {
    conflicts.push_back(fmt::format(
        "targets (the run's: {})",
        run.targets.empty() ? "none, all files" : fmt::format("{}", fmt::join(run.targets, " "))));
  }
  if (given("--no-shim") && run.mode != "baseline") {
    conflicts.push_back(fmt::format("--no-shim (the run is a {} run)", run.mode));
  }
  if (given("--out") && o.out_dir &&
      fs::absolute(*o.out_dir).lexically_normal() != fs::path(run.out_dir).lexically_normal()) {
    conflicts.push_back(fmt::format("--out (the run's: {})", run.out_dir));
  }
  if (given("--shard") || given("--shard-total")) {
    const std::optional<Shard> shard = resolve_shard(o.shard, o.shard_total, o.environment);
    const std::string text = shard ? shard_text(*shard) : "";
    if (text != run.shard) {
      conflicts.push_back(
          fmt::format("--shard (the run's: {})", run.shard.empty() ? "none" : run.shard));
    }
  }
  return conflicts;
}

// The run's options once --resume has put the recorded run's own in place.
RunOptions resumed_options(RunOptions o, const RunRecord& run) {
  if (auto conflicts = conflicts_with_run(o, run); !conflicts.empty()) {
    throw UsageError(fmt::format("--resume continues run {} as it was started: drop {}", run.id,
                                 fmt::join(conflicts, ", ")));
  }
  o.targets = run.targets;
  o.shim = run.mode == "shim";
  o.out_dir = run.out_dir;
  o.baseline_run = run.baseline_run;
  o.previous.clear();
  o.shard.clear();  // the run's files are its shard's already
  o.shard_total = 0;
  return o;
}

unsigned cores() { return std::max(1U, std::thread::hardware_concurrency()); }

// -j, or one file per core.
int jobs_of(const RunOptions& o) { return o.jobs > 0 ? o.jobs : static_cast<int>(cores()); }

// --python relative to where the runner was started; the shim folder; both checked; the threads
// each test process gets.
LaunchOptions launch_options(const RunOptions& o) {
  LaunchOptions launch;
  launch.shim = o.shim;
  launch.python = o.python.find('/') != std::string::npos
                      ? fs::absolute(o.python).lexically_normal().string()
                      : o.python;
  launch.shim_dir =
      fs::absolute(o.shim_dir.value_or(default_shim_dir(o.environment))).lexically_normal();
  launch.threads = threads_per_process(jobs_of(o), cores());
  if (o.shim && !fs::exists(launch.shim_dir / "sitecustomize.py")) {
    throw UsageError(
        fmt::format("shim folder {} has no sitecustomize.py (set --shim-dir or "
                    "DEVSHIM_SHIM_DIR)",
                    launch.shim_dir.string()));
  }
  return launch;
}

// One process per file; in shim mode each writes its redirection record beside its log.
std::vector<ProcessSpec> plan_processes(const RunPlan& plan) {
  std::vector<ProcessSpec> specs;
  specs.reserve(plan.files.size());
  for (const auto& f : plan.files) {
    // launch.python is an absolute path here, so planning needs no PATH from the environment.
    ProcessSpec spec = plan_process(plan.suite, plan.launch, Environment{}, f);
    spec.base_env = plan.env;
    if (plan.options.shim) {
      fs::path record = spec.log_path;
      record += ".redirections.json";
      std::error_code ec;
      fs::remove(record, ec);  // an earlier run's record in a reused --out is not this run's
      spec.env[kRecordVar] = record.string();
      framework_traits(plan.suite.framework).name_tests_in_record(spec);
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

// Files that no longer are in the suite of a resumed run: recorded as errors, so that the run can
// complete and says what happened.
void record_missing(RunPlan& plan, std::int64_t run_id, RunSink& events) {
  for (const std::string& path : plan.resume->missing) {
    FileRecord gone;
    gone.path = path;
    gone.status = FileStatus::kError;
    gone.note = fmt::format("not in the suite any more when run {} was resumed", run_id);
    gone.started_at = gone.finished_at = iso8601_utc_now();
    plan.store->record_file(run_id, gone);
    plan.log->line("Finished test: " + path + " - Status: error - " + gone.note);
    events.report(Problem{Problem::Severity::kWarning,
                          path + " is no longer in the suite: recorded as error"});
  }
}

// --resume writes into the run's folder: refused when a copy of the database would write into
// the original's (runner/results/run_folder.h).
void require_own_folder(const RunRecord& run, const fs::path& db) {
  if (auto owner = foreign_owner(run.out_dir, db)) {
    throw UsageError(
        fmt::format("run {}'s folder {} belongs to database {}: resume it with --db {} (is {} a "
                    "copy?)",
                    run.id, run.out_dir, owner->string(), owner->string(), db.string()));
  }
}

// The files' expected seconds for the progress line's ETA; empty when none is recorded.
std::map<std::string, double> expected_durations(const std::vector<TestFile>& files,
                                                 const std::map<std::string, double>& recorded) {
  std::map<std::string, double> expected;
  if (recorded.empty()) return expected;
  const std::vector<double> estimates = estimate_durations(files, recorded);
  for (std::size_t i = 0; i < files.size(); ++i) expected[files[i].rel_path] = estimates[i];
  return expected;
}

// Bazel's TEST_SHARD_STATUS_FILE: touched to say "this test shards".
void touch_shard_status_file(const Environment& env) {
  const std::string status_file = value_of(env, "TEST_SHARD_STATUS_FILE");
  if (status_file.empty()) return;
  std::FILE* touched = std::fopen(status_file.c_str(), "a");
  if (touched != nullptr) std::fclose(touched);
}

PoolOptions pool_options(const RunOptions& o, double timeout_s) {
  PoolOptions pool;
  pool.jobs = jobs_of(o);
  pool.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  pool.kill_grace = std::chrono::milliseconds(static_cast<long>(o.kill_grace_s * 1000));
  pool.max_log_bytes = static_cast<std::uint64_t>(o.max_log_mb * 1024 * 1024);
  return pool;
}

// The interpreter, looked up once (every file's argv then names it by its path) and checked
// before anything runs; the test environment is its environment's, activated. GoogleTest binaries
// need no Python: for them a missing interpreter only means no probe.
void resolve_interpreter(RunPlan& plan, Environment& env) {
  const Suite& suite = plan.suite;
  const std::string python = plan.launch.python.empty() ? suite.python : plan.launch.python;
  plan.interpreter = find_executable(python, env);
  if (plan.interpreter.empty() || ::access(plan.interpreter.c_str(), X_OK) != 0) {
    if (framework_traits(suite.framework).runs_python()) {
      throw UsageError(fmt::format("python interpreter \"{}\" not found or not executable ({})",
                                   python,
                                   plan.options.python.empty() ? suite.python_from() : "--python"));
    }
    plan.interpreter.clear();
    return;
  }
  plan.launch.python = plan.interpreter;
  if (framework_traits(suite.framework).runs_python()) {
    check_python_interpreter(plan.interpreter,
                             plan.options.python.empty() ? suite.python_from() : "--python", env,
                             suite.project_root);
    activate_interpreter_environment(env, fs::absolute(plan.interpreter));
  }
}

// Before anything runs: the interpreter has the framework's module (pytest) and torch where the
// files import it, else one usage error naming what to install (a missing pytest would fail
// every file on its own). Asked with the test environment, but without activating the shim.
void require_interpreter_modules(
    const RunPlan& plan, const Environment& env,
    const std::map<std::string, std::set<std::string>>& imports_by_file) {
  if (plan.interpreter.empty()) return;
  const Suite& suite = plan.suite;
  std::vector<RequiredModule> required;
  if (suite.framework == Framework::kPytest) {
    required.push_back({"pytest", "the suite's framework"});
  }
  for (const auto& [path, imports] : imports_by_file) {
    if (imports.count("torch") > 0) {
      required.push_back({"torch", fmt::format("its tests import it: {}", path)});
      break;
    }
  }
  Environment probe_env = env;
  probe_env.erase(kActivateVar);
  require_modules(plan.interpreter, plan.options.python.empty() ? suite.python_from() : "--python",
                  required, probe_env, suite.project_root);
}

// What each file imports (with the conftest.py files pytest loads for it), by its path: torch is
// needed where they import it (require_interpreter_modules, with pytest), and the warm start
// preloads it for them. Empty for GoogleTest.
std::map<std::string, std::set<std::string>> checked_imports(const RunPlan& plan,
                                                             const Environment& env,
                                                             const std::vector<TestFile>& files) {
  std::map<std::string, std::set<std::string>> imports_by_file;
  if (!framework_traits(plan.suite.framework).runs_python()) return imports_by_file;
  const std::vector<std::set<std::string>> found = files_imports(plan.suite, files);
  for (std::size_t i = 0; i < files.size(); ++i) imports_by_file[files[i].rel_path] = found[i];
  require_interpreter_modules(plan, env, imports_by_file);
  return imports_by_file;
}

// Test-level targets or -k given, and not one test reported: a mistyped name, never a success.
bool named_tests_matched_nothing(const RunPlan& plan,
                                 const std::map<CaseStatus, std::size_t>& case_counts) {
  const bool selects_tests = std::any_of(plan.files.begin(), plan.files.end(), [](const auto& f) {
    return !f.tests.empty() || !f.keyword.empty();
  });
  std::size_t results = 0;
  for (const auto& [status, n] : case_counts) results += n;
  return selects_tests && results == 0;
}

}  // namespace

RunPlan plan_run(const RunOptions& options) {
  RunPlan plan;
  plan.started = std::chrono::steady_clock::now();
  plan.options = options;
  plan.suite = suite_of(options);
  throw_if_interrupted();  // each step before the run is begun ends here on a signal
  const Suite& suite = plan.suite;
  const fs::path db = fs::absolute(options.db_path.value_or(default_db_path(options.environment)));
  // Run references are resolved before anything is created: an unknown one is bad input, and
  // so is a database that does not exist (opening it would create an empty one).
  const auto recorded_runs = [&](const char* option) -> Store& {
    std::error_code ec;
    if (!plan.store && !fs::exists(db, ec)) {
      throw UsageError(
          fmt::format("{}: no such database, so no run for {} (give the database "
                      "that recorded it with --db)",
                      db.string(), option));
    }
    if (!plan.store) plan.store = std::make_unique<Store>(db);
    return *plan.store;
  };
  std::int64_t previous_run = 0;
  if (!options.previous.empty()) {
    previous_run = recorded_runs("--previous").resolve_run(options.previous).id;
  }
  // --resume: the run's own targets, mode and folder; only its unfinished files
  // (runner/engine/resume.h).
  if (!options.resume.empty()) {
    recorded_runs("--resume");
    plan.resume = plan_resume(*plan.store, suite, options.resume);
    plan.options = resumed_options(options, plan.resume->run);
  }
  RunOptions& o = plan.options;
  std::vector<TestFile> files =
      plan.resume ? plan.resume->files : discover_test_files(suite, o.targets);
  const std::optional<Shard> shard =
      plan.resume ? std::nullopt : resolve_shard(o.shard, o.shard_total, o.environment);
  plan.discovery_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - plan.started).count();
  throw_if_interrupted();

  plan.launch = launch_options(o);
  Environment env = child_environment(suite, plan.launch, o.environment);
  resolve_interpreter(plan, env);
  if (files.empty() && !plan.resume) {
    throw UsageError(fmt::format("no test files matching {} in the targets given under {}",
                                 suite.patterns_text(), suite.tests_root().string()));
  }
  std::map<std::string, std::set<std::string>> imports_by_file = checked_imports(plan, env, files);

  if (plan.resume) require_own_folder(plan.resume->run, db);
  plan.out_dir = prepare_out_dir(o, suite);
  plan.launch.logs_dir = plan.out_dir / "logs";
  plan.log = std::make_unique<RunLog>(plan.out_dir / "run.log", /*append=*/plan.resume.has_value());
  if (!plan.store) plan.store = std::make_unique<Store>(db);
  throw_if_interrupted();
  Store& store = *plan.store;
  claim_run_folder(plan.out_dir, db);

  // Longest first by recorded durations, this shard's share only, the holders of a lock in one
  // shard (runner/engine/schedule.h).
  const RunRecord comparable = comparable_key(suite, o, shard, env);
  if (plan.resume) {
    previous_run = plan.resume->run.previous_run;
  } else if (previous_run == 0) {
    if (auto p = store.comparable_run(comparable)) previous_run = p->id;
  }
  std::set<std::string> failed_before;
  if (o.failed_first && previous_run > 0) {
    for (const auto& f : store.files(previous_run)) {
      if (f.status && is_failure(*f.status)) failed_before.insert(f.path);
    }
  }
  const std::map<std::string, double> recorded = store.durations(suite.name);
  Schedule schedule = schedule_files(files, recorded, shard, locks_of(suite, files), failed_before);
  plan.files = std::move(schedule.files);
  plan.expected_s = expected_durations(plan.files, recorded);
  if (shard) touch_shard_status_file(o.environment);
  const double timeout_s = o.timeout_s.value_or(suite.timeout_s);
  plan.pool = pool_options(o, timeout_s);
  std::vector<std::set<std::string>> imports;
  if (o.warm) {
    for (const TestFile& f : plan.files) imports.push_back(imports_by_file[f.rel_path]);
  }
  plan.pool.warm = warm_start(plan, env, imports);

  // One copy of the environment for every file; each spec holds only what is its own.
  plan.env = std::make_shared<const Environment>(env);
  plan.specs = plan_processes(plan);
  if (plan.pool.warm) {
    for (std::size_t i = 0; i < plan.specs.size(); ++i) {
      plan.specs[i].waits_for_warm = waits_for_warm(*plan.pool.warm, imports[i], suite.framework);
    }
  }

  RunRecord& run = plan.run;
  if (plan.resume) run = plan.resume->run;
  run.suite = suite.name;
  run.suite_file = suite.file.string();
  run.framework = framework_name(suite.framework);
  run.targets = o.targets;
  run.command_line = o.command_line;
  run.mode = o.shim ? "shim" : "baseline";
  if (!plan.resume) run.started_at = iso8601_utc_now();
  run.project_root = suite.project_root.string();
  run.tests_dir = suite.tests_dir;
  run.out_dir = plan.out_dir.string();
  run.source_url = suite.source_url;
  run.baseline_run = o.baseline_run;
  run.previous_run = previous_run;
  if (!plan.resume) {
    run.shard = comparable.shard;
    run.shard_plan = schedule.shard_plan;
    run.policy = comparable.policy;
  }
  run.jobs = plan.pool.jobs;
  run.timeout_s = timeout_s;
  throw_if_interrupted();
  return plan;
}

RunExecution execute_run(RunPlan& plan, RunServices services) {
  RunExecution ex;
  Store& store = *plan.store;
  RunRecord& run = plan.run;
  services.processes.prepare();  // before the probes' threads
  const GitCheckout checkout = services.probes.git_checkout(plan.suite.project_root);
  run.project_commit = checkout.commit;
  ex.git_toplevel = checkout.toplevel;
  ex.environment =
      services.probes.start_environment(plan.interpreter, *plan.env, plan.suite.project_root);
  if (plan.resume) {
    ex.run_id = run.id;
    if (!store.claim_run(ex.run_id)) {
      throw UsageError(fmt::format("run {} is being resumed by another runner", ex.run_id));
    }
  } else {
    std::vector<std::string> planned;
    planned.reserve(plan.files.size());
    for (const auto& f : plan.files) planned.push_back(f.rel_path);
    ex.run_id = store.begin_run(run, planned);
  }
  const std::int64_t run_id = ex.run_id;

  const std::string shard_note = run.shard.empty() ? "" : " (shard " + run.shard + ")";
  const double timeout_s = run.timeout_s;
  if (plan.resume) {
    plan.log->line(fmt::format(
        "Run {} resumed: {} of its {} files left to run, -j {}, timeout {}s, database {}", run_id,
        plan.files.size(), plan.resume->planned, plan.pool.jobs, timeout_s, store.path().string()));
    record_missing(plan, run_id, services.events);
  } else {
    plan.log->line(
        fmt::format("Run {} of suite {}{} ({} mode): {} files, -j {}, timeout {}s, "
                    "database {}",
                    run_id, plan.suite.name, shard_note, run.mode, plan.files.size(),
                    plan.pool.jobs, timeout_s, store.path().string()));
  }
  // For suites of many files: what finding and planning them cost (docs/reliability.md#scale).
  plan.log->line(fmt::format(
      "Discovered {} files in {:.2f}s; ready to start after {:.2f}s", plan.files.size(),
      plan.discovery_s,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - plan.started).count()));

  // What can run at once: never more than there are files ("1 file, 2 at once" reads wrong).
  const int at_once = static_cast<int>(
      std::min<std::size_t>(plan.pool.jobs, std::max<std::size_t>(plan.files.size(), 1)));
  const std::unique_ptr<FileProgress> progress = services.events.progress(
      plan.files.size(),
      {plan.expected_s, at_once, std::chrono::seconds(plan.options.heartbeat_s)});
  services.events.report(RunStarted{run_id, plan.resume.has_value(), plan.files.size(),
                                    plan.suite.name, run.shard, at_once, plan.options.shim,
                                    plan.out_dir});
  if (const std::string note = missing_links_note(run);
      !note.empty() && plan.options.say_missing_links) {
    services.events.report(Problem{Problem::Severity::kNotice, note});
  }
  RunObserver observer(plan, run_id, *progress, services.events);
  ex.completed = services.processes.run(plan.specs, plan.pool, observer);
  progress->close();
  // Results that waited for a locked database: a last try each busy timeout, three times.
  for (int attempt = 0; attempt < 3 && !observer.flush(); ++attempt) {
  }
  if (observer.unrecorded() > 0) {
    throw sql::BusyError(fmt::format(
        "{}: the database stayed locked: {} finished file{} of run {} could not be recorded "
        "(their logs are in {}); once it is free, `runner {} --resume {}` runs them again",
        store.path().string(), observer.unrecorded(), observer.unrecorded() == 1 ? "" : "s", run_id,
        (plan.out_dir / "logs").string(), plan.options.suite.string(), run_id));
  }

  // This session's files cut short (a crash, a test that ended the session) go on without the
  // tests they reported, before any rerun.
  if (ex.completed && plan.options.continue_after_crash > 0 && observer.any_failure()) {
    FollowUpOptions more{plan.options.continue_after_crash, plan.pool, plan.out_dir,
                         std::chrono::seconds(plan.options.heartbeat_s)};
    ex.completed =
        continue_crashed_files(plan.suite, plan.launch, *plan.env, plan.files, store, run_id,
                               *plan.log, more, services.processes, services.events);
  }
  // A resumed run also reruns the failures of its earlier sessions that were not rerun yet.
  const int reruns = plan.options.rerun_failures;
  if (ex.completed && reruns > 0 && (plan.resume || observer.any_failure())) {
    FollowUpOptions rerun{reruns, plan.pool, plan.out_dir,
                          std::chrono::seconds(plan.options.heartbeat_s)};
    // A resumed run's failures may be of any file of the run, not only of those run now.
    const std::vector<TestFile>& run_files = plan.resume ? plan.resume->run_files : plan.files;
    ex.completed = rerun_failures(plan.suite, plan.launch, *plan.env, run_files, store, run_id,
                                  *plan.log, rerun, services.processes, services.events);
  }
  ex.start = observer.start();
  ex.processes = &services.processes;
  ex.events = &services.events;
  return ex;
}

int finish_run(RunPlan& plan, RunExecution& execution) {
  Store& store = *plan.store;
  RunSink& events = *execution.events;
  const std::int64_t run_id = execution.run_id;
  // The whole run's counts: a resumed run's earlier sessions and the reruns' verdicts included.
  std::map<FileStatus, std::size_t> file_counts;
  std::size_t planned_files = 0;
  for (const auto& f : store.files(run_id)) {
    ++planned_files;
    if (f.status) ++file_counts[*f.status];
  }
  const std::map<CaseStatus, std::size_t> case_counts = store.case_counts(run_id);

  std::size_t failures = 0;
  std::size_t finished = 0;
  std::string summary;
  for (const auto& [status, n] : file_counts) {
    if (is_failure(status)) failures += n;
    finished += n;
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, to_string(status));
  }
  if (finished < planned_files) {
    summary += fmt::format("{}{} not run", summary.empty() ? "" : ", ", planned_files - finished);
  }
  if (interrupt_signal() != 0) execution.completed = false;  // a signal after the last file
  std::string run_status = !execution.completed ? "interrupted"
                           : failures > 0       ? "failed"
                                                : "passed";
  if (run_status == "passed" && named_tests_matched_nothing(plan, case_counts)) {
    run_status = "failed";
    events.report(Problem{Problem::Severity::kNotice,
                          "no test matched the tests the targets name (FILE::TEST, -k)"});
    plan.log->line("No test matched the tests the targets name (FILE::TEST, -k): the run failed");
  }
  {
    // The probes' findings, plus where the git checkout starts (for upstream links' {path}).
    nlohmann::json env_json = execution.environment.get();
    if (!execution.git_toplevel.empty()) env_json["git_toplevel"] = execution.git_toplevel;
    if (!execution.start.is_null()) env_json["start"] = execution.start;
    store.set_environment(run_id, env_json.dump());
    // Now that the probe has named torch's and the shim's versions, they join the comparable
    // key: the run chosen at the start (for --failed-first) may have had other versions.
    if (plan.options.previous.empty() && !plan.resume) {
      RunRecord key = plan.run;
      key.environment = env_json.dump();
      const auto comparable = store.comparable_run(key, run_id);
      const std::int64_t previous = comparable ? comparable->id : 0;
      if (previous != plan.run.previous_run) {
        store.set_previous_run(run_id, previous);
        plan.run.previous_run = previous;
      }
    }
  }
  store.finish_run(run_id, run_status, iso8601_utc_now());
  try {
    GapLog(store).update_from_run(run_id);  // the API gap log (docs/gaps.md)
  } catch (const Error& e) {
    events.report(
        Problem{Problem::Severity::kError, std::string("gap log not updated: ") + e.what()});
  }
  if (plan.options.try_settings && execution.completed && execution.processes != nullptr) {
    // --try-settings: the settings the gap log's actions name, tried on their tests.
    const std::vector<TestFile>& files = plan.resume ? plan.resume->run_files : plan.files;
    const TrialPlan trial{plan.suite, plan.launch, *plan.env, files, plan.pool, plan.out_dir};
    execution.completed =
        try_settings(trial, store, run_id, *plan.log, *execution.processes, events);
  }
  std::string tests;
  std::size_t total_tests = 0;
  for (const auto& [status, n] : case_counts) {
    total_tests += n;
    tests += fmt::format(", {} {}", n, to_string(status));
  }
  tests = fmt::format("{} test{}{}", total_tests, total_tests == 1 ? "" : "s", tests);
  plan.log->line(
      fmt::format("Run {} {}: files: {}; tests: {}", run_id, run_status, summary, tests));

  events.report(RunRecorded{run_id, run_status, planned_files, summary, tests});
  RunClosed closed{run_id, "", {}, plan.out_dir, store.path()};
  if (plan.options.on_recorded) {
    try {
      closed.reports = plan.options.on_recorded(store, run_id, plan.out_dir);
    } catch (const Error& e) {
      // The results are safe in the database; `runner report` can redo the reports.
      events.report(
          Problem{Problem::Severity::kError, std::string("reports not written: ") + e.what()});
    }
  }
  if (interrupt_signal() != 0 && run_status != "interrupted") {
    // A signal while the gap log, the trials or the reports were written: the run stops there.
    run_status = "interrupted";
    execution.completed = false;
    store.finish_run(run_id, run_status, iso8601_utc_now());
    plan.log->line(fmt::format("Interrupted by {} while finishing: run {} marked interrupted",
                               signal_name(interrupt_signal()), run_id));
    closed.interrupted_by = signal_name(interrupt_signal());
  }
  events.report(closed);
  if (!execution.completed) {
    return interrupt_signal() != 0 ? exit_code_of_signal(interrupt_signal()) : kExitInterrupted;
  }
  return failures > 0 || run_status == "failed" ? kExitFailures : kExitOk;
}

}  // namespace devshim
