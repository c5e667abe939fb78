#include "tests/reports/site_fixture.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

namespace devshim::testing {

std::int64_t record_night(Store& store, const Night& n) {
  RunRecord r;
  r.suite = n.suite;
  r.suite_file = "/suites/" + n.suite + "/suite.json";
  r.framework = "unittest";
  r.mode = n.mode;
  r.policy = n.mode == "shim" ? "default" : "";
  r.started_at = fmt::format("2026-{:02}-{:02}T01:00:00Z", 1 + n.night / 28 % 12, 1 + n.night % 28);
  r.host = "nightly";
  r.project_root = n.project_root;
  r.tests_dir = "tests";
  r.project_commit = fmt::format("c0ffee{:02x}{:032x}", n.night % 256, n.night);
  r.out_dir =
      (n.out_root.empty() ? "/runs" : n.out_root) + "/" + std::to_string(n.night) + "-" + n.mode;
  r.source_url = n.source_url;
  r.environment =
      nlohmann::json{{"torch", "2.13.0+cpu"},
                     {"python", "3.11.7"},
                     {"shim", {{"name", "devshim"}, {"version", "0.2.0"}, {"policy", "default"}}}}
          .dump();
  r.baseline_run = n.baseline_run;
  if (auto previous = store.comparable_run(r)) r.previous_run = previous->id;
  std::vector<std::string> paths;
  paths.reserve(static_cast<std::size_t>(n.files));
  for (int f = 0; f < n.files; ++f) paths.push_back(fmt::format("test_{:04}.py", f));
  const std::int64_t id = store.begin_run(r, paths);
  Store::FileWriter writer(store, id);
  const int failing = n.failing + n.night % 2;
  const bool flaky_night = n.flaky && n.night % 3 == 1;
  RerunResult rerun;
  for (int f = 0; f < n.files; ++f) {
    FileRecord file;
    file.path = paths[static_cast<std::size_t>(f)];
    std::vector<TestCase> cases;
    bool any_failed = false;
    for (int k = 0; k < n.tests_per_file; ++k) {
      TestCase t;
      t.classname = fmt::format("tests.test_{:04}.T", f);
      t.name = fmt::format("test_{:03}", k);
      t.source = {"tests/" + file.path, 10 + 3 * k};
      t.duration_s = 0.01 * (1 + (f * n.tests_per_file + k) % 7);
      if (flaky_night && f == n.files - 1 && k == 0) {
        t.status = CaseStatus::kFailed;
        t.exception = "RuntimeError";
        t.message = "device busy";
        rerun.path = file.path;
        rerun.attempts = {
            {file.path, t.classname, t.name, 1, CaseStatus::kFailed, "RuntimeError: device busy"},
            {file.path, t.classname, t.name, 2, CaseStatus::kPassed, ""}};
        TestCase passed = t;
        passed.status = CaseStatus::kPassed;
        rerun.flaky.push_back(passed);
      } else if (f * n.tests_per_file + k < failing) {
        t.status = CaseStatus::kFailed;
        t.exception = "AssertionError";
        t.message = fmt::format("tensor {} differs on night {}", k, n.night);
        any_failed = true;
      } else if (k == n.tests_per_file - 1) {
        t.status = CaseStatus::kSkipped;
        t.message = "needs two GPUs";
      } else {
        t.status = CaseStatus::kPassed;
      }
      cases.push_back(std::move(t));
    }
    file.status = any_failed ? FileStatus::kFailed : FileStatus::kPassed;
    file.exit_code = any_failed ? 1 : 0;
    file.duration_s = 0.5 + 0.1 * f;
    if (!n.out_root.empty()) {
      file.log_path = "logs/" + file.path + ".log";
      std::filesystem::create_directories(std::filesystem::path(r.out_dir) / "logs");
      std::ofstream(std::filesystem::path(r.out_dir) / file.log_path)
          << "log of " << file.path << " on night " << n.night << "\n";
    }
    file.started_at = r.started_at;
    file.finished_at = r.started_at;
    writer.add(file, cases);
  }
  writer.commit();
  if (!rerun.path.empty()) store.record_reruns(id, rerun);
  store.finish_run(id, failing > 0 ? "failed" : "passed", r.started_at.substr(0, 14) + "20:00Z");
  return id;
}

}  // namespace devshim::testing
