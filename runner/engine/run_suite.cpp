#include "runner/engine/run_suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/error.h"
#include "runner/engine/discovery.h"
#include "runner/engine/interrupt.h"
#include "runner/engine/run_steps.h"
#include "runner/engine/schedule.h"
#include "runner/engine/suite.h"
#include "runner/results/store.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

std::string env_or(const Environment& env, const char* name, const std::string& fallback) {
  std::string v = value_of(env, name);
  return v.empty() ? fallback : v;
}

// --list: the files the targets select; with a shard, its files, planned with the durations of
// the database when it exists (the same plan the run would make), in path order.
int list_files(const RunOptions& o, RunSink& events) {
  const Suite suite = suite_of(o);
  std::vector<TestFile> files = discover_test_files(suite, o.targets);
  if (auto shard = resolve_shard(o.shard, o.shard_total, o.environment)) {
    const fs::path db = fs::absolute(o.db_path.value_or(default_db_path(o.environment)));
    std::map<std::string, double> recorded;
    std::error_code ec;
    if (fs::exists(db, ec)) recorded = Store(db, Store::Purpose::kRead).durations(suite.name);
    files = schedule_files(files, recorded, *shard, locks_of(suite, files)).files;
    std::sort(files.begin(), files.end(),
              [](const TestFile& a, const TestFile& b) { return a.rel_path < b.rel_path; });
  }
  FilesListed listed;
  for (const auto& f : files) listed.files.push_back(f.rel_path);
  events.report(listed);
  return kExitOk;
}

class SystemServices final : public ServiceSet {
 public:
  explicit SystemServices(const Environment& env) : probes_(env) {}
  RunServices get(RunSink& events) override { return {processes_, probes_, events}; }

 private:
  PoolCommandRunner processes_;
  SystemProbes probes_;
};

}  // namespace

Suite suite_of(const RunOptions& options) {
  return options.opened_suite ? *options.opened_suite
                              : load_suite(options.suite, options.environment);
}

std::unique_ptr<ServiceSet> system_services(const Environment& runner_env) {
  return std::make_unique<SystemServices>(runner_env);
}

std::optional<fs::path> project_results_dir() {
  std::error_code ec;
  fs::path dir = fs::current_path(ec);
  if (ec) return std::nullopt;
  for (;;) {
    if (fs::is_regular_file(dir / ".devshim" / "results.db", ec)) return dir / ".devshim";
    if (dir == dir.root_path() || !dir.has_parent_path()) return std::nullopt;
    dir = dir.parent_path();
  }
}

fs::path default_db_path(const Environment& env) {
  if (std::string db = value_of(env, "DEVSHIM_DB"); !db.empty()) return db;
  if (auto project = project_results_dir()) return *project / "results.db";
  std::string data = value_of(env, "XDG_DATA_HOME");
  if (data.empty()) data = env_or(env, "HOME", ".") + "/.local/share";
  return fs::path(data) / "devshim" / "results.db";
}

fs::path default_out_root(const Environment& env) {
  if (std::string out = value_of(env, "DEVSHIM_OUT"); !out.empty()) return out;
  if (auto project = project_results_dir()) return *project / "runs";
  return "devshim-out";
}

int run_suite(const RunOptions& options, RunServices services) {
  if (options.list_only) return list_files(options, services.events);
  RunPlan plan = plan_run(options);
  RunExecution execution = execute_run(plan, services);
  return finish_run(plan, execution);
}

DifferentialRun run_differential(const RunOptions& options, const std::string& baseline,
                                 RunServices services) {
  if (!options.shim) {
    throw UsageError("--differential compares with the shim on: drop --no-shim");
  }
  DifferentialRun result;
  if (options.list_only) {  // the same files both ways
    result.exit_code = list_files(options, services.events);
    return result;
  }
  RunOptions shim_run = options;
  if (!baseline.empty()) {
    Store store(fs::absolute(options.db_path.value_or(default_db_path(options.environment))));
    const RunRecord b = store.resolve_run(baseline);
    if (b.mode != "baseline") {
      throw UsageError(fmt::format(
          "run {} ran with the shim on; --baseline needs a run made with --no-shim", b.id));
    }
    result.baseline_run = b.id;
  } else {
    // First the baseline (shim off), into <out>/baseline when --out is given.
    RunOptions b = options;
    b.shim = false;
    b.previous.clear();           // --previous names the shim run's; the baseline finds its own
    b.rerun_failures = 0;         // without the shim, failures are expected: no reruns
    b.try_settings = false;       // the shim's settings mean nothing without it
    b.say_missing_links = false;  // the shim run says it
    if (options.out_dir) b.out_dir = *options.out_dir / "baseline";
    RunPlan plan = plan_run(b);
    RunExecution execution = execute_run(plan, services);
    result.baseline_run = execution.run_id;
    result.exit_code = finish_run(plan, execution);
    if (result.exit_code == kExitInterrupted || interrupt_signal() != 0) return result;
  }
  shim_run.baseline_run = result.baseline_run;
  RunPlan plan = plan_run(shim_run);
  RunExecution execution = execute_run(plan, services);
  result.shim_run = execution.run_id;
  result.exit_code = finish_run(plan, execution);
  return result;
}

}  // namespace devshim
