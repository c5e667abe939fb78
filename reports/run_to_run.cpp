// A run against its previous run (new_failure, lost, fixed, still_failing, flaky, missing_before,
// unchanged) and its flaky tests' attempts (docs/report-format.md, "Changes since the previous
// run").
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

void add_run_to_run(Report& r, std::vector<CaseAttempt> all_attempts,
                    const std::vector<FileRecord>& previous_files,
                    const std::set<std::string>& previous_failing) {
  std::map<std::string, std::vector<CaseAttempt>> attempts;
  for (auto& a : all_attempts) {
    attempts[test_key(a.file, a.classname, a.name)].push_back(std::move(a));
  }
  // The previous run's status of each file; previous_failing: those with a failing test.
  std::map<std::string, FileStatus> before_files;
  for (const auto& f : previous_files) {
    if (f.status) before_files[f.path] = *f.status;
  }
  auto file_level_failure_before = [&](const std::string& path) {
    auto it = before_files.find(path);
    return it != before_files.end() && is_failure(it->second) && previous_failing.count(path) == 0;
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
      if (!r.previous ||
          (rc.change != "new_failure" && rc.change != "fixed" && rc.change != "missing_before")) {
        continue;
      }
      const std::optional<CaseStatus>& prev = rc.previous_status;
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
      } else {
        r.previous->missing_before.push_back(std::move(change));
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
        rf.error ? file_error_text(*rf.error) : rf.file.note,
        {}};
    if (cls == "new_failure") {
      r.previous->new_failures.push_back(std::move(change));
    } else if (cls == "fixed") {
      r.previous->fixed.push_back(std::move(change));
    }
  }
}

}  // namespace devshim
