#include "runner/engine/trial.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "runner/engine/collect.h"
#include "runner/engine/rerun.h"
#include "runner/engine/run_log.h"
#include "runner/results/gap_log.h"
#include "runner/results/store.h"

namespace devshim {

namespace {

using TestKey = std::pair<std::string, std::string>;  // class name, test name

// Collects what each trial process reported.
class TrialObserver : public PoolObserver {
 public:
  TrialObserver(const Suite& suite, const std::vector<const TestFile*>& files,
                const std::vector<ProcessSpec>& specs)
      : suite_(suite), files_(files), specs_(specs) {}
  void on_finish(std::size_t i, const ProcessResult& r) override {
    if (r.interrupted) return;
    for (const TestCase& c : collect_results(suite_, *files_[i], specs_[i], r).cases) {
      outcomes_[files_[i]->rel_path][{c.classname, c.name}] = c.status;
    }
  }
  /// Each file's tests as the trial reported them.
  const std::map<std::string, std::map<TestKey, CaseStatus>>& outcomes() const { return outcomes_; }

 private:
  const Suite& suite_;
  const std::vector<const TestFile*>& files_;
  const std::vector<ProcessSpec>& specs_;
  std::map<std::string, std::map<TestKey, CaseStatus>> outcomes_;
};

bool passes(CaseStatus s) {
  return s == CaseStatus::kPassed || s == CaseStatus::kXfailed || s == CaseStatus::kXpassed;
}

// What every trial of a run shares.
struct TrialContext {
  const TrialPlan& plan;
  std::map<std::string, const TestFile*> by_path;  // the run's files
  GapLog& gaps;
  std::int64_t run_id;
  RunLog& log;
  CommandRunner& processes;
  RunSink& events;
};

// Runs the tests of entries with setting; records each entry's count. False when interrupted.
bool trial_of(const std::string& setting, const std::vector<const GapEntry*>& entries,
              TrialContext& t) {
  const auto& by_path = t.by_path;
  Environment env = t.plan.env;
  const std::size_t eq = setting.find('=');
  env[setting.substr(0, eq)] = setting.substr(eq + 1);
  std::map<std::string, std::set<TestKey>> wanted;  // by file
  for (const GapEntry* e : entries) {
    for (const GapTest& t : e->test_list) {
      if (by_path.count(t.file) > 0) wanted[t.file].insert({t.classname, t.name});
    }
  }
  std::vector<const TestFile*> files;
  std::vector<ProcessSpec> specs;
  std::size_t tests = 0;
  for (const auto& [path, keys] : wanted) {
    std::vector<TestCase> cases;
    for (const auto& [classname, name] : keys) {
      TestCase c;
      c.classname = classname;
      c.name = name;
      c.status = CaseStatus::kFailed;
      cases.push_back(std::move(c));
    }
    tests += cases.size();
    const TestFile& file = *by_path.at(path);
    files.push_back(&file);
    specs.push_back(plan_selected(t.plan.suite, t.plan.launch, env, file,
                                  t.plan.out_dir / "trials" / setting,
                                  rerun_selectors(t.plan.suite, file, cases)));
  }
  t.events.report(TrialStarted{setting, tests, entries.size(), files.size()});
  TrialObserver observer(t.plan.suite, files, specs);
  PoolOptions pool = t.plan.pool;
  pool.warm.reset();  // a warm parent patched torch with the run's settings
  if (!t.processes.run(specs, pool, observer)) return false;
  std::size_t passed_all = 0;
  for (const GapEntry* e : entries) {
    int tried = 0, passed = 0;
    for (const GapTest& test : e->test_list) {
      if (by_path.count(test.file) == 0) continue;
      ++tried;
      auto file = observer.outcomes().find(test.file);
      if (file == observer.outcomes().end()) continue;
      auto it = file->second.find({test.classname, test.name});
      if (it != file->second.end() && passes(it->second)) ++passed;
    }
    passed_all += static_cast<std::size_t>(passed);
    t.gaps.record_trial(e->suite, e->api, t.run_id, setting, tried, passed);
    t.log.line(fmt::format("Trial of {}: {}: {} of {} tests pass", setting, e->api, passed, tried));
  }
  t.events.report(TrialEnded{setting, passed_all, tests});
  return true;
}

}  // namespace

bool try_settings(const TrialPlan& plan, Store& store, std::int64_t run_id, RunLog& log,
                  CommandRunner& processes, RunSink& events) {
  GapLog gaps(store);
  const std::vector<GapEntry> entries = gaps.for_run(run_id);
  std::map<std::string, std::vector<const GapEntry*>> by_setting;
  for (const GapEntry& e : entries) {
    if (!e.setting.empty()) by_setting[e.setting].push_back(&e);
  }
  if (by_setting.empty()) {
    events.report(NoSettingToTry{});
    log.line("Trials: no gap-log entry of the run names a setting");
    return true;
  }
  TrialContext context{plan, {}, gaps, run_id, log, processes, events};
  for (const TestFile& f : plan.files) context.by_path.emplace(f.rel_path, &f);
  for (const auto& [setting, list] : by_setting) {
    if (!trial_of(setting, list, context)) return false;
  }
  return true;
}

}  // namespace devshim
