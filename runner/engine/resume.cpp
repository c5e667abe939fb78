#include "runner/engine/resume.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "base/error.h"

namespace devshim {

ResumePlan plan_resume(Store& store, const Suite& suite, const std::string& run_spec) {
  ResumePlan plan;
  plan.run = store.resolve_run(run_spec);
  const RunRecord& run = plan.run;
  if (run.suite != suite.name) {
    throw UsageError(fmt::format("run {} is a run of suite \"{}\", not of \"{}\" ({})", run.id,
                                 run.suite, suite.name, suite.file.string()));
  }
  if (run.framework == "imported") {
    // Its out_dir is TorchDevice's log folder, and its files are not this suite's processes.
    throw UsageError(fmt::format(
        "run {} was imported from TorchDevice's logs (runner import): it cannot be resumed",
        run.id));
  }
  if (run.status == "passed" || run.status == "failed") {
    throw UsageError(
        fmt::format("run {} has finished ({}): nothing to resume", run.id, run.status));
  }
  if (run.status == "running") {
    // Store marks a run whose runner died on this host "interrupted" when it opens the database.
    throw UsageError(fmt::format(
        "run {} is still running (runner pid {} on {}); stop that runner first, or wait for it",
        run.id, run.runner_pid, run.host));
  }
  std::map<std::string, bool> unfinished;  // path -> found in the suite now
  std::set<std::string> planned;
  for (const FileRecord& f : store.files(run.id)) {
    ++plan.planned;
    planned.insert(f.path);
    if (!f.status || *f.status == FileStatus::kInterrupted) unfinished.emplace(f.path, false);
  }
  for (TestFile& f : discover_test_files(suite, run.targets)) {
    if (planned.count(f.rel_path) == 0) continue;
    plan.run_files.push_back(f);
    auto it = unfinished.find(f.rel_path);
    if (it == unfinished.end()) continue;
    it->second = true;
    plan.files.push_back(std::move(f));
  }
  for (const auto& [path, found] : unfinished) {
    if (!found) plan.missing.push_back(path);
  }
  return plan;
}

}  // namespace devshim
