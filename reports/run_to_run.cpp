// A run against its previous run (new_failure, fixed, still_failing, flaky, unchanged) and its
// flaky tests' attempts (docs/report-format.md, "Changes since the previous run").
#include <map>
#include <set>

#include "reports/report.h"

namespace devshim {

namespace {

std::string test_key(const std::string& file, const std::string& classname,
                     const std::string& name) {
  return file + '\n' + classname + '\n' + name;
}

constexpr const char* kFileTest = "(file)";  // a file that failed without a test result

}  // namespace

void add_run_to_run(Store& store, Report& r, std::int64_t other_run) {
  std::map<std::string, std::vector<CaseAttempt>> attempts;
  for (auto& a : store.attempts(r.run.id)) {
    attempts[test_key(a.file, a.classname, a.name)].push_back(std::move(a));
  }

  // The previous run: each test's status, and the files that failed without a failing test.
  std::map<std::string, CaseStatus> before;
  std::map<std::string, FileStatus> before_files;
  std::set<std::string> before_failing_cases;  // files with a failing test
  if (other_run > 0) {
    if (auto prev = store.run(other_run)) {
      r.previous.emplace();
      r.previous->previous_run = prev->id;
      r.previous->started_at = prev->started_at;
      for (const auto& [cls, meaning] : change_classes()) r.previous->counts[cls] = 0;
      for (const auto& c : store.cases(prev->id)) {
        before[test_key(c.file, c.test.classname, c.test.name)] = c.test.status;
        if (is_failure(c.test.status)) before_failing_cases.insert(c.file);
      }
      for (const auto& f : store.files(prev->id)) {
        if (f.status) before_files[f.path] = *f.status;
      }
    }
  }
  auto file_level_failure_before = [&](const std::string& path) {
    auto it = before_files.find(path);
    return it != before_files.end() && is_failure(it->second) &&
           before_failing_cases.count(path) == 0;
  };

  for (auto& rf : r.files) {
    const std::string& path = rf.file.path;
    bool failing_case = false;
    for (auto& rc : rf.cases) {
      const std::string key = test_key(path, rc.test.classname, rc.test.name);
      if (auto it = attempts.find(key); it != attempts.end()) rc.attempts = std::move(it->second);
      if (rc.flaky)
        r.flaky.push_back({path, rc.test.classname, rc.test.name, rc.attempts, rc.links});
      failing_case = failing_case || is_failure(rc.test.status);
      if (!r.previous) continue;
      auto b = before.find(key);
      const std::optional<CaseStatus> prev =
          b == before.end() ? std::nullopt : std::optional<CaseStatus>(b->second);
      rc.change = change_class(prev, rc.test.status, rc.flaky);
      ++r.previous->counts[rc.change];
      ReportPrevious::Change change{path,
                                    rc.test.classname,
                                    rc.test.name,
                                    prev ? std::string(to_string(*prev)) : "absent",
                                    std::string(to_string(rc.test.status)),
                                    is_failure(rc.test.status) ? failure_text(rc.test) : "",
                                    rc.links};
      if (rc.change == "new_failure") {
        r.previous->new_failures.push_back(std::move(change));
      } else if (rc.change == "fixed") {
        r.previous->fixed.push_back(std::move(change));
      }
    }

    // A file that failed as a whole, without a test saying why (a crash before the first test,
    // an import error without a test case).
    auto file_attempts = attempts.find(test_key(path, "", kFileTest));
    const bool file_flaky = file_attempts != attempts.end() && !file_attempts->second.empty() &&
                            !is_failure(file_attempts->second.back().status);
    if (file_flaky) r.flaky.push_back({path, "", kFileTest, file_attempts->second, {}});
    if (!r.previous) continue;
    const bool now = rf.file.status && is_failure(*rf.file.status) && !failing_case;
    const bool then = file_level_failure_before(path);
    std::string cls;
    if (file_flaky) {
      cls = "flaky";
    } else if (now) {
      cls = then ? "still_failing" : "new_failure";
    } else if (then && rf.file.status && !is_failure(*rf.file.status)) {
      cls = "fixed";
    }
    if (cls.empty()) continue;
    ++r.previous->counts[cls];
    auto prev_status = before_files.find(path);
    ReportPrevious::Change change{
        path,
        "",
        kFileTest,
        prev_status == before_files.end() ? "absent" : std::string(to_string(prev_status->second)),
        rf.status,
        rf.file.note,
        {}};
    if (cls == "new_failure") {
      r.previous->new_failures.push_back(std::move(change));
    } else if (cls == "fixed") {
      r.previous->fixed.push_back(std::move(change));
    }
  }
}

}  // namespace devshim
