#include "runner/engine/rerun.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "runner/engine/collect.h"
#include "runner/engine/follow_up.h"
#include "runner/engine/frameworks/framework_traits.h"
#include "runner/engine/run_log.h"
#include "runner/results/native_id.h"
#include "runner/results/status.h"
#include "runner/results/store.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

std::string key_of(const TestCase& c) { return c.classname + '\n' + c.name; }

// One failing file being rerun.
struct Tracked {
  TestFile file;
  FileRecord first;                // its first attempt's record
  std::vector<TestCase> pending;   // failing tests not yet seen passing
  std::vector<TestCase> failures;  // its first attempt's failing tests
  bool file_level = false;         // it failed without a failing test: rerun it whole
  bool whole_file = false;         // this attempt runs the whole file (no selectors)
  bool done = false;
  std::size_t flaky_tests = 0;
  RerunResult result;
};

}  // namespace

std::optional<std::vector<std::string>> rerun_selectors(const Suite& suite, const TestFile& file,
                                                        const std::vector<TestCase>& failing) {
  if (failing.empty()) return std::nullopt;
  TestFile named = file;
  named.tests.clear();
  for (const TestCase& c : failing) {
    const TestIds ids = test_ids(framework_name(suite.framework), suite.tests_dir, file.rel_path,
                                 c.classname, c.name);
    if (ids.target.empty()) return std::nullopt;
    std::string test = ids.target.substr(ids.target.find("::") + 2);
    if (std::find(named.tests.begin(), named.tests.end(), test) == named.tests.end()) {
      named.tests.push_back(std::move(test));
    }
  }
  return framework_traits(suite.framework).test_selectors(suite, named);
}

ProcessSpec plan_selected(const Suite& suite, const LaunchOptions& launch, const Environment& env,
                          const TestFile& file, const fs::path& logs_dir,
                          const std::optional<std::vector<std::string>>& selectors) {
  LaunchOptions options = launch;
  options.logs_dir = logs_dir;
  if (!selectors) return plan_process(suite, options, env, file);
  TestFile named = file;  // the selectors name the tests: not the file's test-level targets
  named.tests.clear();
  ProcessSpec spec = plan_process(suite, options, env, named);
  framework_traits(suite.framework).select(spec, *selectors);
  return spec;
}

ProcessSpec plan_rerun(const Suite& suite, const LaunchOptions& launch, const Environment& env,
                       const TestFile& file, const fs::path& out_dir, int attempt,
                       const std::optional<std::vector<std::string>>& selectors) {
  return plan_selected(suite, launch, env, file,
                       out_dir / "reruns" / fmt::format("attempt-{}", attempt), selectors);
}

namespace {

// The run's failing files that a rerun can take: each with its failing tests (none: it failed
// before any test said why, and is rerun whole). Files a resumed run's earlier session already
// reran, and files the suite no longer has, are left out.
std::vector<Tracked> failing_files(const std::vector<TestFile>& files, Store& store,
                                   std::int64_t run_id) {
  std::map<std::string, TestFile> by_path;
  for (const auto& f : files) by_path.emplace(f.rel_path, f);
  std::map<std::string, std::vector<TestCase>> failing;
  for (auto& c : store.cases(run_id)) {
    if (is_failure(c.test.status) || !c.test.culprit.empty()) {
      failing[c.file].push_back(std::move(c.test));
    }
  }
  std::set<std::string> rerun_before;  // by an earlier session of a resumed run
  for (const CaseAttempt& a : store.attempts(run_id)) {
    if (a.attempt > 1) rerun_before.insert(a.file);
  }
  std::vector<Tracked> tracked;
  for (auto& f : store.files(run_id)) {
    if (!f.status || !is_failure(*f.status) || by_path.count(f.path) == 0 ||
        rerun_before.count(f.path) > 0) {
      continue;
    }
    Tracked t;
    t.file = by_path.at(f.path);
    t.pending = failing[f.path];
    t.failures = t.pending;
    t.file_level = t.pending.empty();
    t.result.path = f.path;
    for (const TestCase& c : t.pending) {
      t.result.attempts.push_back({f.path, c.classname, c.name, 1, c.status, failure_text(c)});
    }
    if (t.file_level) {
      t.result.attempts.push_back(
          {f.path, "", "(file)", 1, CaseStatus::kError,
           std::string(to_string(*f.status)) + (f.note.empty() ? "" : ": " + f.note)});
    }
    t.first = std::move(f);
    tracked.push_back(std::move(t));
  }
  return tracked;
}

std::string flaky_note(std::size_t flaky_tests) {
  return fmt::format("flaky: {} failing test{} passed on a rerun", flaky_tests,
                     flaky_tests == 1 ? "" : "s");
}

// What one attempt of a tracked file showed, and where its results go.
struct Attempt {
  int number = 0;
  const ProcessSpec& spec;
  const FollowUpObserver::Finished& finished;
};

// Takes one finished attempt of `t`: records its tests' outcomes, marks the tests that passed
// flaky, and when the file ran whole and passed makes its results the file's in the store.
void judge_attempt(Tracked& t, const Attempt& a, Store& store, std::int64_t run_id,
                   const fs::path& out_dir) {
  const ProcessResult& r = a.finished.process;
  const CollectedFile& got = a.finished.collected;
  if (r.interrupted) return;
  const bool passed = !is_failure(got.status) && got.status != FileStatus::kInterrupted;
  // The file's results become this attempt's: it ran whole and passed. Returns its log.
  const auto adopt_attempt = [&] {
    const FileRecord rec = file_record(t.file.rel_path, got, r, a.spec, out_dir);
    // Flaky tests keep their first failure readable, as when their row is only updated.
    std::vector<TestCase> cases = got.cases;
    for (TestCase& c : cases) {
      for (const TestCase& first : t.failures) {
        if (key_of(first) != key_of(c)) continue;
        c.exception = first.exception;
        c.message = first.message;
        c.traceback = first.traceback;
      }
    }
    store.record_file(run_id, rec, cases);
    return rec.log_path;
  };
  if (t.file_level) {
    t.result.attempts.push_back({t.file.rel_path, "", "(file)", a.number,
                                 passed ? CaseStatus::kPassed : CaseStatus::kError,
                                 passed ? "" : std::string(to_string(got.status))});
    if (!passed) return;
    // It failed before any test said why, and passes now.
    const std::string log = adopt_attempt();
    t.result.note = fmt::format("flaky: {} on attempt 1, {} on attempt {} ({})",
                                to_string(*t.first.status), to_string(got.status), a.number, log);
    t.done = true;
    return;
  }
  std::map<std::string, const TestCase*> seen;
  for (const TestCase& c : got.cases) seen.emplace(key_of(c), &c);
  std::vector<TestCase> still;
  for (TestCase& p : t.pending) {
    auto it = seen.find(key_of(p));
    if (it == seen.end()) {
      still.push_back(std::move(p));  // not reported this time: try again
      continue;
    }
    const TestCase& now_case = *it->second;
    t.result.attempts.push_back({t.file.rel_path, p.classname, p.name, a.number, now_case.status,
                                 is_failure(now_case.status) ? failure_text(now_case) : ""});
    if (is_failure(now_case.status) || !now_case.culprit.empty()) {
      still.push_back(std::move(p));
    } else {
      t.result.flaky.push_back(now_case);
      ++t.flaky_tests;
    }
  }
  t.pending = std::move(still);
  // A crash or a timeout cut attempt 1 short: the tests after its culprit never ran. A whole
  // rerun that passes has them all (and the culprit without its culprit mark).
  if (t.pending.empty() && t.whole_file && passed) adopt_attempt();
  if (t.pending.empty()) {
    t.done = true;
    t.result.status = FileStatus::kPassed;
    t.result.note = flaky_note(t.flaky_tests);
  }
}

}  // namespace

bool rerun_failures(const Suite& suite, const LaunchOptions& launch, const Environment& env,
                    const std::vector<TestFile>& files, Store& store, std::int64_t run_id,
                    RunLog& log, const FollowUpOptions& options, CommandRunner& processes,
                    RunSink& events) {
  if (options.passes <= 0) return true;
  std::vector<Tracked> tracked = failing_files(files, store, run_id);
  bool completed = true;
  for (int attempt = 2; completed && attempt <= options.passes + 1; ++attempt) {
    std::vector<Tracked*> now;
    std::vector<ProcessSpec> specs;
    std::size_t selected = 0;
    for (auto& t : tracked) {
      if (t.done) continue;
      std::optional<std::vector<std::string>> selectors;
      if (!t.file_level && t.first.status == FileStatus::kFailed) {
        selectors = rerun_selectors(suite, t.file, t.pending);
      }
      if (selectors) ++selected;
      t.whole_file = !selectors;
      specs.push_back(plan_rerun(suite, launch, env, t.file, options.out_dir, attempt, selectors));
      now.push_back(&t);
    }
    if (now.empty()) break;
    events.report(
        PassStarted{PassStarted::Kind::kRerun, attempt - 1, options.passes, now.size(), selected});
    log.line(fmt::format("Rerun (attempt {}): {} files", attempt, now.size()));
    const std::unique_ptr<FileProgress> progress =
        events.progress(now.size(), {{}, options.pool.jobs, options.heartbeat});
    std::vector<TestFile> now_files;
    now_files.reserve(now.size());
    for (const Tracked* t : now) now_files.push_back(t->file);
    FollowUpObserver observer(suite, std::move(now_files), specs, log, *progress,
                              fmt::format("Rerun (attempt {})", attempt));
    completed = processes.run(specs, options.pool, observer);
    progress->close();
    for (const auto& [i, finished] : observer.finished()) {
      judge_attempt(*now[i], Attempt{attempt, specs[i], finished}, store, run_id, options.out_dir);
    }
  }
  for (auto& t : tracked) {
    const bool rerun = std::any_of(t.result.attempts.begin(), t.result.attempts.end(),
                                   [](const CaseAttempt& a) { return a.attempt > 1; });
    if (!rerun) continue;  // interrupted before its rerun started
    if (!t.done && t.flaky_tests > 0) t.result.note = flaky_note(t.flaky_tests);
    store.record_reruns(run_id, t.result);
  }
  return completed;
}

}  // namespace devshim
