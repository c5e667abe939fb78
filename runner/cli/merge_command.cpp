#include "runner/cli/merge_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <ctime>
#include <map>
#include <memory>
#include <set>

#include "base/error.h"
#include "runner/cli/process_environment.h"
#include "runner/engine/run_suite.h"
#include "runner/results/gap_log.h"
#include "runner/results/run_folder.h"
#include "runner/results/store.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

struct Input {
  fs::path db;
  Store* store = nullptr;  // owned by merge_command
  RunRecord run;
  fs::path logs_from;  // the folder holding this run's logs/ here; empty when not found
};

std::string describe(const Input& in) {
  return fmt::format("{} (run {}{})", in.db.string(), in.run.id,
                     in.run.shard.empty() ? "" : ", shard " + in.run.shard);
}

// "2/4" → {2, 4}; {0, 0} when malformed.
std::pair<int, int> parse_shard(const std::string& s) {
  int i = 0, n = 0;
  const auto slash = s.find('/');
  if (slash == std::string::npos) return {0, 0};
  std::from_chars(s.data(), s.data() + slash, i);
  std::from_chars(s.data() + slash + 1, s.data() + s.size(), n);
  return {i, n};
}

// Refuses runs that are not parts of one run; warns about missing shards.
void check_together(const std::vector<Input>& inputs) {
  const Input& a = inputs.front();
  for (const Input& b : inputs) {
    auto differ = [&](const char* what, const std::string& x, const std::string& y) {
      if (x == y) return;
      throw UsageError(fmt::format(
          "{} and {} are not parts of one run: {} \"{}\" vs \"{}\" (merge the shards of one "
          "suite, mode and set of targets)",
          describe(a), describe(b), what, x, y));
    };
    differ("suite", a.run.suite, b.run.suite);
    differ("framework", a.run.framework, b.run.framework);
    differ("mode", a.run.mode, b.run.mode);
    auto joined = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& t : v) s += (s.empty() ? "" : " ") + t;
      return s;
    };
    differ("targets", joined(a.run.targets), joined(b.run.targets));
    if (a.run.shard.empty() != b.run.shard.empty()) {
      throw UsageError(fmt::format("{} is a shard and {} is not: merge the shards of one run",
                                   describe(a.run.shard.empty() ? b : a),
                                   describe(a.run.shard.empty() ? a : b)));
    }
  }
  if (a.run.shard.empty()) return;
  const int total = parse_shard(a.run.shard).second;
  std::map<int, const Input*> seen;
  for (const Input& b : inputs) {
    const auto [i, n] = parse_shard(b.run.shard);
    if (n != total) {
      throw UsageError(fmt::format("{} and {} split the run differently (shards of {} and {})",
                                   describe(a), describe(b), total, n));
    }
    if (b.run.shard_plan != a.run.shard_plan) {
      throw UsageError(fmt::format(
          "{} and {} planned their shards from different duration histories, so files may be "
          "missing or run twice: give every shard the same starting database (docs/nightly.md)",
          describe(a), describe(b)));
    }
    if (auto [it, fresh] = seen.emplace(i, &b); !fresh) {
      throw UsageError(fmt::format("{} and {} are the same shard {}", describe(*it->second),
                                   describe(b), b.run.shard));
    }
  }
  std::string missing;
  for (int i = 1; i <= total; ++i) {
    if (seen.count(i) == 0)
      missing += fmt::format("{}{}/{}", missing.empty() ? "" : ", ", i, total);
  }
  if (!missing.empty()) {
    std::fprintf(stderr,
                 "runner: warning: shard%s %s missing: their files are not in the merged run\n",
                 missing.find(',') == std::string::npos ? " is" : "s are", missing.c_str());
  }
}

void copy_into(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::exists(from, ec) || fs::equivalent(from, to, ec)) return;
  fs::create_directories(to.parent_path(), ec);
  fs::copy(from, to, fs::copy_options::overwrite_existing | fs::copy_options::recursive, ec);
  if (ec)
    throw RuntimeError(
        fmt::format("cannot copy {} to {}: {}", from.string(), to.string(), ec.message()));
}

// Records the inputs' runs as one run of out; returns its id.
std::int64_t merge_runs(std::vector<Input>& inputs, Store& out, const fs::path& out_dir,
                        const std::vector<std::string>& command_line, std::int64_t baseline_run) {
  const RunRecord& first = inputs.front().run;
  RunRecord merged = first;
  merged.id = 0;
  merged.command_line = command_line;
  merged.status = "running";
  merged.finished_at.clear();
  merged.out_dir = out_dir.string();
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  claim_run_folder(out_dir, out.path());
  merged.jobs = 0;
  merged.timeout_s = 0;
  merged.runner_pid = 0;
  merged.host.clear();
  merged.baseline_run = baseline_run;
  merged.shard.clear();
  merged.shard_plan.clear();
  std::string finished;
  bool interrupted = false;
  std::set<std::string> hosts;
  for (const Input& in : inputs) {
    const RunRecord& r = in.run;
    merged.started_at = std::min(merged.started_at, r.started_at);
    finished = std::max(finished, r.finished_at);
    merged.jobs += r.jobs;
    merged.timeout_s = std::max(merged.timeout_s, r.timeout_s);
    if (hosts.insert(r.host).second) merged.host += (merged.host.empty() ? "" : ", ") + r.host;
    interrupted = interrupted || r.status == "interrupted" || r.status == "running";
  }
  merged.previous_run = 0;
  if (auto p = out.comparable_run(merged)) merged.previous_run = p->id;

  // Every file once, in path order (so the merged run reads like a run of one machine).
  struct Part {
    Input* input;
    FileRecord file;
  };
  std::map<std::string, Part> parts;
  for (Input& in : inputs) {
    for (auto& f : in.store->files(in.run.id)) {
      const std::string path = f.path;
      if (auto [it, fresh] = parts.emplace(path, Part{&in, std::move(f)}); !fresh) {
        throw UsageError(fmt::format("{} and {} both ran {}: they are not shards of one run",
                                     describe(*it->second.input), describe(in), path));
      }
    }
  }
  std::vector<std::string> planned;
  planned.reserve(parts.size());
  for (const auto& [path, part] : parts) planned.push_back(path);
  const std::int64_t id = out.begin_run(merged, planned);

  bool failed = false;
  for (Input& in : inputs) {
    std::map<std::string, std::vector<StoredCase>> cases;
    for (auto& c : in.store->cases(in.run.id)) cases[c.file].push_back(std::move(c));
    std::map<std::string, std::vector<CaseAttempt>> attempts;
    for (auto& a : in.store->attempts(in.run.id)) attempts[a.file].push_back(std::move(a));
    auto redirections = in.store->file_redirections(in.run.id);
    for (auto& [path, part] : parts) {
      if (part.input != &in || !part.file.status) continue;
      failed = failed || is_failure(*part.file.status);
      std::vector<TestCase> tests;
      RerunResult rerun;
      rerun.path = path;
      rerun.attempts = attempts[path];
      for (const StoredCase& c : cases[path]) {
        tests.push_back(c.test);
        if (c.flaky) rerun.flaky.push_back(c.test);
      }
      out.record_file(id, part.file, tests, redirections[path]);
      if (!rerun.attempts.empty() || !rerun.flaky.empty()) out.record_reruns(id, rerun);
      if (!in.logs_from.empty()) {
        for (const auto& rel : file_outputs(part.file)) {
          copy_into(in.logs_from / rel, out_dir / rel);
        }
      }
    }
    if (!in.logs_from.empty()) copy_into(in.logs_from / "reruns", out_dir / "reruns");
  }
  out.set_environment(id, first.environment.empty() ? "{}" : first.environment);
  out.finish_run(id, interrupted ? "interrupted" : failed ? "failed" : "passed", finished);
  try {
    GapLog(out).update_from_run(id);  // as a run of one machine does (docs/gaps.md)
  } catch (const Error& e) {
    std::fprintf(stderr, "runner: error: gap log not updated: %s\n", e.what());
  }
  return id;
}

fs::path found_dir(const fs::path& candidate) {
  std::error_code ec;
  return fs::is_directory(candidate / "logs", ec) ? candidate : fs::path();
}

}  // namespace

MergeResult merge_command(const MergeOptions& o) {
  if (o.inputs.empty()) throw UsageError("runner merge: name the shard databases to merge");
  std::error_code ec;
  const fs::path output = fs::absolute(o.output).lexically_normal();
  std::vector<Input> inputs;
  std::vector<std::unique_ptr<Store>> stores;
  for (const auto& db : o.inputs) {
    if (!fs::is_regular_file(db, ec)) {
      throw UsageError(fmt::format("{}: no such database", db.string()));
    }
    if (fs::exists(output, ec) && fs::equivalent(db, output, ec)) {
      throw UsageError(fmt::format("{} is both an input and the output (-o)", db.string()));
    }
    Input in;
    in.db = db;
    stores.push_back(std::make_unique<Store>(db, Store::Purpose::kRead));
    in.store = stores.back().get();
    auto newest = in.store->runs(1);
    if (newest.empty()) throw UsageError(fmt::format("{}: no runs recorded", db.string()));
    in.run = newest.front();
    if (in.run.status == "running") {
      std::fprintf(stderr, "runner: warning: %s is still marked running: merged as interrupted\n",
                   describe(in).c_str());
    }
    in.logs_from = found_dir(fs::absolute(db).parent_path());
    if (in.logs_from.empty()) in.logs_from = found_dir(in.run.out_dir);
    inputs.push_back(std::move(in));
  }
  check_together(inputs);

  const RunRecord& first = inputs.front().run;
  fs::path out_dir = o.out_dir ? fs::absolute(*o.out_dir)
                               : fs::absolute(default_out_root(runner_environment())) /
                                     first.suite / (local_stamp() + "-merged");
  out_dir = out_dir.lexically_normal();
  fs::create_directories(out_dir, ec);
  if (ec) throw UsageError(fmt::format("output folder {}: {}", out_dir.string(), ec.message()));
  for (const Input& in : inputs) {
    if (in.logs_from.empty()) {
      std::fprintf(stderr,
                   "runner: warning: the logs of %s are not here (no logs/ beside the database, "
                   "nor at %s): copy them into %s/logs for the reports' log links\n",
                   describe(in).c_str(), in.run.out_dir.c_str(), out_dir.c_str());
    }
  }
  Store out(output);

  // Differential shards: their baseline runs become the merged run's baseline.
  std::int64_t baseline = 0;
  const bool differential = std::all_of(inputs.begin(), inputs.end(),
                                        [](const Input& in) { return in.run.baseline_run > 0; });
  if (differential) {
    std::vector<Input> baselines;
    for (const Input& in : inputs) {
      Input b;
      b.db = in.db;
      b.store = in.store;
      auto r = b.store->run(in.run.baseline_run);
      if (!r) throw UsageError(fmt::format("{}: its baseline run is gone", describe(in)));
      b.run = *r;
      if (!in.logs_from.empty()) b.logs_from = found_dir(in.logs_from / "baseline");
      if (b.logs_from.empty()) b.logs_from = found_dir(b.run.out_dir);
      baselines.push_back(std::move(b));
    }
    baseline = merge_runs(baselines, out, out_dir / "baseline", o.command_line, 0);
    if (o.on_recorded) o.on_recorded(out, baseline, out_dir / "baseline");
  }
  MergeResult result;
  result.run_id = merge_runs(inputs, out, out_dir, o.command_line, baseline);
  result.status = out.run(result.run_id)->status;

  std::string shards;
  for (const Input& in : inputs) {
    shards += (shards.empty() ? "" : ", ") + (in.run.shard.empty() ? in.db.string() : in.run.shard);
  }
  const auto files = out.files(result.run_id);
  fmt::print("runner: merged {} run{} of {} ({}) into run {} of {}: {} file{}, {}\n", inputs.size(),
             inputs.size() == 1 ? "" : "s", first.suite, shards, result.run_id, output.string(),
             files.size(), files.size() == 1 ? "" : "s", result.status);
  std::vector<fs::path> reports;
  if (o.on_recorded) {
    try {
      reports = o.on_recorded(out, result.run_id, out_dir);
    } catch (const Error& e) {
      std::fprintf(stderr, "runner: error: reports not written: %s\n", e.what());
    }
  }
  for (const auto& report : reports) fmt::print("runner: report  {}\n", report.string());
  fmt::print("runner: results {} (run {})\n", output.string(), result.run_id);
  return result;
}

}  // namespace devshim
