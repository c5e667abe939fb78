#include "runner/engine/continuation.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "runner/engine/collect.h"
#include "runner/engine/follow_up.h"
#include "runner/engine/frameworks/framework_traits.h"
#include "runner/engine/rerun.h"
#include "runner/engine/run_log.h"
#include "runner/results/status.h"
#include "runner/results/store.h"

namespace devshim {

namespace {

std::string key_of(const TestCase& c) { return c.classname + '\n' + c.name; }

// Whether a file's process stopped in the middle of it: a crash, or a test that ended its
// session itself (the tests after it did not run either way).
bool cut_short(std::optional<FileStatus> status, std::string_view note) {
  return status == FileStatus::kCrashed ||
         (status == FileStatus::kError && is_session_ended_note(note));
}

// One file being continued after a crash or a test that ended its session.
struct Crashed {
  TestFile file;
  std::string first_note;         // the note of its first process's record
  std::vector<TestCase> cases;    // every test its processes reported
  std::set<std::string> keys;     // key_of of cases
  std::vector<std::string> logs;  // its continuations' logs
  std::size_t added = 0;
  bool done = false;
};

std::vector<Crashed> crashed_files(const std::vector<TestFile>& files, Store& store,
                                   std::int64_t run_id) {
  std::map<std::string, TestFile> by_path;
  for (const auto& f : files) by_path.emplace(f.rel_path, f);
  std::map<std::string, std::vector<TestCase>> reported;
  for (auto& c : store.cases(run_id)) reported[c.file].push_back(std::move(c.test));
  std::vector<Crashed> crashed;
  for (const FileRecord& f : store.files(run_id)) {
    if (!cut_short(f.status, f.note) || by_path.count(f.path) == 0 || reported[f.path].empty()) {
      continue;  // a crash before any test said so repeats itself
    }
    Crashed c;
    c.file = by_path.at(f.path);
    c.first_note = f.note;
    c.cases = std::move(reported[f.path]);
    for (const TestCase& t : c.cases) c.keys.insert(key_of(t));
    crashed.push_back(std::move(c));
  }
  return crashed;
}

std::string continued_note(const Crashed& c) {
  return fmt::format("{}{}continued: {} more test{} ran in {} more process{} ({})", c.first_note,
                     c.first_note.empty() ? "" : "; ", c.added, c.added == 1 ? "" : "s",
                     c.logs.size(), c.logs.size() == 1 ? "" : "es", fmt::join(c.logs, ", "));
}

// Takes one finished continuation of c: records the tests it reported that no earlier process
// of the file did, and its log's path (log_path_in, as the file's own). The file is done unless
// it was cut short again after reporting new tests.
void take(Crashed& c, const FollowUpObserver::Finished& finished, const ProcessSpec& spec,
          const std::filesystem::path& out_dir, Store& store, std::int64_t run_id) {
  c.done = true;
  if (finished.process.interrupted) return;
  std::vector<TestCase> added;
  for (const TestCase& t : finished.collected.cases) {
    if (c.keys.insert(key_of(t)).second) added.push_back(t);
  }
  if (added.empty()) return;
  c.logs.push_back(log_path_in(spec, out_dir));
  c.added += added.size();
  c.cases.insert(c.cases.end(), added.begin(), added.end());
  store.add_cases(run_id, c.file.rel_path, added, continued_note(c));
  c.done = !cut_short(finished.collected.status, finished.collected.note);
}

}  // namespace

bool continue_crashed_files(const Suite& suite, const LaunchOptions& launch, const Environment& env,
                            const std::vector<TestFile>& files, Store& store, std::int64_t run_id,
                            RunLog& log, const FollowUpOptions& options, CommandRunner& processes,
                            RunSink& events) {
  if (options.passes <= 0) return true;
  const FrameworkTraits& traits = framework_traits(suite.framework);
  std::vector<Crashed> crashed = crashed_files(files, store, run_id);
  bool completed = true;
  for (int k = 1; completed && k <= options.passes; ++k) {
    std::vector<Crashed*> now;
    std::vector<TestFile> now_files;
    std::vector<ProcessSpec> specs;
    for (Crashed& c : crashed) {
      if (c.done) continue;
      const std::optional<std::vector<std::string>> reported =
          rerun_selectors(suite, c.file, c.cases);
      ProcessSpec spec =
          plan_selected(suite, launch, env, c.file,
                        options.out_dir / "continued" / std::to_string(k), std::nullopt);
      if (!reported || !traits.deselect(spec, *reported)) {
        c.done = true;  // its tests cannot all be named, or the framework cannot leave them out
        continue;
      }
      specs.push_back(std::move(spec));
      now.push_back(&c);
      now_files.push_back(c.file);
    }
    if (now.empty()) break;
    events.report(PassStarted{PassStarted::Kind::kContinuation, k, options.passes, now.size(), 0});
    log.line(fmt::format("Continuation {}: {} files cut short", k, now.size()));
    const std::unique_ptr<FileProgress> progress =
        events.progress(now.size(), {{}, options.pool.jobs, options.heartbeat});
    FollowUpObserver observer(suite, std::move(now_files), specs, log, *progress,
                              fmt::format("Continuation {}", k));
    completed = processes.run(specs, options.pool, observer);
    progress->close();
    for (const auto& [i, finished] : observer.finished()) {
      take(*now[i], finished, specs[i], options.out_dir, store, run_id);
    }
  }
  return completed;
}

}  // namespace devshim
