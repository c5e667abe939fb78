#include "runner/cli/runs_command.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/printable.h"
#include "runner/results/status.h"
#include "runner/results/store.h"

namespace devshim {

namespace {

using nlohmann::json;

json parsed_object(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : json::object();
}

// The shim's policy in a shim run ("default", "accelerator-only", ...): as the runner recorded it,
// else (runs before schema 11) as the interpreter's probe reported it; "-" for a baseline run.
std::string policy_of(const RunRecord& r, const json& environment) {
  if (r.mode != "shim") return "-";
  if (!r.policy.empty()) return r.policy;
  const auto shim = environment.find("shim");
  if (shim == environment.end() || !shim->is_object()) return "?";
  return shim->value("policy", std::string("?"));
}

// What `runner runs` shows of one run: the stored summary (written with its reports) where there
// is one, else what the database alone says.
struct RunRow {
  const RunRecord& run;
  std::map<std::string, int> files;
  json summary;
  std::string policy;
  RunVersions versions;
  std::string start;  ///< start_mode
  int tests = 0;
  double pass_rate = 0;
  double duration_s = 0;

  RunRow(Store& store, const RunRecord& r) : RunRow(store, r, parsed_object(r.environment)) {}
  RunRow(Store& store, const RunRecord& r, const json& environment)
      : run(r),
        files(store.file_status_counts(r.id)),
        summary(parsed_object(r.summary)),
        policy(policy_of(r, environment)),
        versions(run_versions(r, environment)),
        start(start_mode(environment)) {
    if (!summary.empty()) {
      tests = summary.value("tests", 0);
      pass_rate = summary.value("pass_rate", 0.0);
      duration_s = summary.value("duration_s", 0.0);
      return;
    }
    int passed = 0, uncounted = 0;
    for (const auto& [status, n] : store.case_counts(r.id)) {
      tests += static_cast<int>(n);
      if (status == CaseStatus::kPassed) passed += static_cast<int>(n);
      if (status == CaseStatus::kSkipped || status == CaseStatus::kXfailed) {
        uncounted += static_cast<int>(n);
      }
    }
    pass_rate = tests > uncounted ? static_cast<double>(passed) / (tests - uncounted) : 0;
    duration_s = seconds_between(r.started_at, r.finished_at);
  }

  // A count of the summary's ("new_failures", "regressions"); "-" when the run has nothing it is
  // compared with, "?" when no report has counted it yet.
  std::string compared(const char* key) const {
    if (summary.empty()) return "?";
    const auto it = summary.find(key);
    return it == summary.end() || it->is_null() ? "-" : it->dump();
  }

  json to_json() const {
    return {
        {"id", run.id},
        {"suite", run.suite},
        {"mode", run.mode},
        {"policy", policy},
        {"shim_version", versions.shim.empty() ? json(nullptr) : json(versions.shim)},
        {"torch", versions.torch.empty() ? json(nullptr) : json(versions.torch)},
        {"start_mode", start.empty() ? json(nullptr) : json(start)},
        {"status", run.status},
        {"started_at", run.started_at},
        {"finished_at", run.finished_at.empty() ? json(nullptr) : json(run.finished_at)},
        {"duration_s", duration_s},
        {"tests", tests},
        {"pass_rate", pass_rate},
        {"files", files},
        {"host", run.host},
        {"project_commit", run.project_commit.empty() ? json(nullptr) : json(run.project_commit)},
        {"baseline_run", run.baseline_run > 0 ? json(run.baseline_run) : json(nullptr)},
        {"previous_run", run.previous_run > 0 ? json(run.previous_run) : json(nullptr)},
        {"out_dir", run.out_dir},
        {"summary", summary.empty() ? json(nullptr) : summary}};
  }
};

// "42s", "3:07", "1:02:03"; "-" for none.
std::string duration_text(double seconds) {
  if (seconds <= 0) return "-";
  const long long s = std::llround(seconds);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}:{:02}", s / 60, s % 60);
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

}  // namespace

int list_runs(const std::filesystem::path& db_path, int limit, bool as_json) {
  if (!std::filesystem::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  Store store(db_path, Store::Purpose::kRead);
  const std::vector<RunRecord> runs = store.runs(limit);
  if (as_json) {
    json out = json::array();
    for (const auto& r : runs) out.push_back(RunRow(store, r).to_json());
    fmt::print("{}\n", out.dump(2, ' ', false, json::error_handler_t::replace));
    return kExitOk;
  }
  if (runs.empty()) {
    fmt::print("no runs in {}\n", db_path.string());
    return kExitOk;
  }
  constexpr const char* kRow =
      "{:>5}  {:<16} {:<8} {:<10} {:<6} {:<11} {:<5} {:<11} {:<20} {:>8} {:>6} {:>6} {:>4} {:>4} "
      "{:>4} {:>6}  {}\n";
  // reg: regressions against the baseline, lost tests included; lost: those lost alone; cbfail:
  // CUDA-branch failures (passed without the shim, fail on a CUDA path the baseline could not
  // take), which are not regressions.
  fmt::print(kRow, "run", "suite", "mode", "policy", "shim", "torch", "start", "status",
             "started (UTC)", "duration", "tests", "pass", "new", "reg", "lost", "cbfail", "files");
  auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : printable(s); };
  for (const auto& r : runs) {
    const RunRow row(store, r);
    fmt::print(kRow, r.id, printable(r.suite), r.mode, printable(row.policy),
               or_dash(row.versions.shim), or_dash(row.versions.torch), or_dash(row.start),
               r.status, r.started_at, duration_text(row.duration_s), row.tests,
               row.tests > 0 ? fmt::format("{:.1f}%", 100 * row.pass_rate) : "-",
               row.compared("new_failures"), row.compared("regressions"), row.compared("lost"),
               row.compared("cuda_branch_failures"), counts_text(row.files));
  }
  return kExitOk;
}

}  // namespace devshim
