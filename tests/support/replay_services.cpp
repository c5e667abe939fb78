#include "tests/support/replay_services.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>
#include <vector>

#include "runner/engine/command_runner.h"
#include "runner/engine/run_probes.h"
#include "runner/engine/run_steps.h"
#include "runner/results/redirection_record.h"
#include "tests/support/test_support.h"

namespace devshim::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The absolute paths a recording names by a token, longest first where they nest.
using Places = std::vector<std::pair<std::string, std::string>>;  // path, token

Places places(const fs::path& project_root, const fs::path& out) {
  Places p{{fs::weakly_canonical(project_root).string(), "@PROJECT_ROOT@"},
           {fs::weakly_canonical(out).string(), "@OUT@"},
           {fs::weakly_canonical(DEVSHIM_SOURCE_DIR).string(), "@SOURCE@"}};
  std::stable_sort(p.begin(), p.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  return p;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string to_tokens(std::string text, const Places& p) {
  for (const auto& [path, token] : p) text = replace_all(std::move(text), path, token);
  return text;
}

std::string from_tokens(std::string text, const Places& p) {
  for (const auto& [path, token] : p) text = replace_all(std::move(text), token, path);
  return text;
}

// A path of the run's out folder as the recording names it; empty when it lies elsewhere.
std::string relative_to(const fs::path& path, const fs::path& out) {
  if (path.empty()) return {};
  const fs::path rel = fs::weakly_canonical(path).lexically_relative(fs::weakly_canonical(out));
  if (rel.empty() || *rel.begin() == "..") return {};
  return rel.generic_string();
}

// The files a test process leaves: its log, its XML, the shim's record.
std::vector<fs::path> files_of(const ProcessSpec& spec) {
  std::vector<fs::path> files{spec.log_path};
  if (!spec.junit_path.empty()) files.push_back(spec.junit_path);
  if (auto record = spec.env.find(kRecordVar); record != spec.env.end()) {
    files.emplace_back(record->second);
  }
  return files;
}

std::string batch_key(const std::vector<ProcessSpec>& specs, const fs::path& out) {
  return specs.empty() ? "" : relative_to(specs.front().log_path.parent_path(), out);
}

json result_json(const ProcessResult& r) {
  json j{
      {"launch_error", r.launch_error}, {"timed_out", r.timed_out}, {"timeout_s", r.timeout_s},
      {"log_too_big", r.log_too_big},   {"warm", r.warm},           {"duration_s", r.duration_s}};
  j["interrupted"] = r.interrupted;
  j["exit_code"] = r.exit_code ? json(*r.exit_code) : json(nullptr);
  j["signal"] = r.signal ? json(*r.signal) : json(nullptr);
  return j;
}

ProcessResult result_of(const json& j) {
  ProcessResult r;
  if (!j.at("exit_code").is_null()) r.exit_code = j.at("exit_code").get<int>();
  if (!j.at("signal").is_null()) r.signal = j.at("signal").get<int>();
  r.launch_error = j.at("launch_error").get<std::string>();
  r.timed_out = j.at("timed_out").get<bool>();
  r.timeout_s = j.at("timeout_s").get<double>();
  r.log_too_big = j.at("log_too_big").get<bool>();
  r.warm = j.at("warm").get<bool>();
  r.duration_s = j.at("duration_s").get<double>();
  r.interrupted = j.value("interrupted", false);
  return r;
}

json read_json(const fs::path& path, json fallback) {
  return fs::exists(path) ? json::parse(read_file(path)) : std::move(fallback);
}

void write_json(const fs::path& path, const json& j) { write_file(path, j.dump(1) + "\n"); }

// Forwards the pool's news to the run's observer, keeping what a replay needs.
class RecordingObserver final : public PoolObserver {
 public:
  RecordingObserver(PoolObserver& next, const std::vector<ProcessSpec>& specs, const fs::path& dir,
                    const fs::path& out, json& processes)
      : next_(next), specs_(specs), dir_(dir), out_(out), processes_(processes) {}

  void on_start(std::size_t i) override { next_.on_start(i); }
  void on_tick() override { next_.on_tick(); }
  void on_interrupt(int signo) override { next_.on_interrupt(signo); }
  void on_cold_start(std::size_t i, const std::string& why) override {
    cold_[i] = why;
    next_.on_cold_start(i, why);
  }
  void on_warm_starting(const WarmStartOptions& options) override {
    next_.on_warm_starting(options);
  }
  void on_warm_start(const std::optional<WarmReady>& ready, const std::string& why) override {
    json warm{{"why", why}};
    if (ready) warm["ready"] = {{"preloaded", ready->preloaded}, {"ready_s", ready->ready_s}};
    processes_["warm_starts"][batch_key(specs_, out_)] = warm;
    next_.on_warm_start(ready, why);
  }
  void on_finish(std::size_t i, const ProcessResult& r) override {
    const ProcessSpec& spec = specs_[i];
    const Places p = places(spec.cwd, out_);
    for (const fs::path& file : files_of(spec)) {
      const std::string rel = relative_to(file, out_);
      if (!rel.empty() && fs::exists(file)) write_file(dir_ / rel, to_tokens(read_file(file), p));
    }
    json entry = result_json(r);
    if (auto c = cold_.find(i); c != cold_.end()) entry["cold_start"] = c->second;
    processes_["processes"][relative_to(spec.log_path, out_)] = entry;
    next_.on_finish(i, r);
  }

 private:
  PoolObserver& next_;
  const std::vector<ProcessSpec>& specs_;
  const fs::path& dir_;
  const fs::path& out_;
  json& processes_;
  std::map<std::size_t, std::string> cold_;
};

class RecordingRunner final : public CommandRunner {
 public:
  RecordingRunner(fs::path dir, fs::path out) : dir_(std::move(dir)), out_(std::move(out)) {}
  void prepare() override { real_.prepare(); }
  bool run(const std::vector<ProcessSpec>& specs, const PoolOptions& options,
           PoolObserver& observer) override {
    json processes = read_json(dir_ / "processes.json", json::object());
    RecordingObserver recording(observer, specs, dir_, out_, processes);
    const bool done = real_.run(specs, options, recording);
    write_json(dir_ / "processes.json", processes);
    return done;
  }

 private:
  fs::path dir_, out_;
  PoolCommandRunner real_;
};

std::future<json> ready(json j) {
  std::promise<json> answer;
  answer.set_value(std::move(j));
  return answer.get_future();
}

class RecordingProbes final : public RunProbes {
 public:
  RecordingProbes(const Environment& env, fs::path dir, fs::path out)
      : real_(env), dir_(std::move(dir)), out_(std::move(out)) {}
  GitCheckout git_checkout(const fs::path& root) override {
    GitCheckout found = real_.git_checkout(root);
    append("git", {{"commit", found.commit}, {"toplevel", found.toplevel}}, root);
    return found;
  }
  std::future<json> start_environment(const std::string& interpreter, const Environment& env,
                                      const fs::path& root) override {
    json found = real_.start_environment(interpreter, env, root).get();
    append("environments", found, root);
    return ready(std::move(found));
  }

 private:
  void append(const char* key, const json& answer, const fs::path& root) {
    const fs::path file = dir_ / "environment.json";
    json all = read_json(file, json::object());
    all[key].push_back(json::parse(to_tokens(answer.dump(), places(root, out_))));
    write_json(file, all);
  }
  SystemProbes real_;
  fs::path dir_, out_;
};

class ReplayRunner final : public CommandRunner {
 public:
  ReplayRunner(fs::path dir, fs::path out) : dir_(std::move(dir)), out_(std::move(out)) {
    if (dir_.empty()) return;
    json recorded = read_json(dir_ / "processes.json", json::object());
    processes_ = recorded.value("processes", json::object());
    warm_starts_ = recorded.value("warm_starts", json::object());
  }
  bool run(const std::vector<ProcessSpec>& specs, const PoolOptions& options,
           PoolObserver& observer) override {
    if (dir_.empty() || out_.empty()) {
      throw std::logic_error(
          "replay_runner: a run of test processes needs DEVSHIM_REPLAY_OUT and one of "
          "DEVSHIM_RECORD_TO, DEVSHIM_REPLAY_FROM");
    }
    if (auto warm = warm_starts_.find(batch_key(specs, out_)); warm != warm_starts_.end()) {
      if (options.warm) observer.on_warm_starting(*options.warm);
      std::optional<WarmReady> ready;
      if (warm->contains("ready")) {
        ready = WarmReady{-1, warm->at("ready").at("preloaded").get<std::vector<std::string>>(),
                          warm->at("ready").at("ready_s").get<double>()};
      }
      observer.on_warm_start(ready, warm->at("why").get<std::string>());
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const ProcessSpec& spec = specs[i];
      const std::string key = relative_to(spec.log_path, out_);
      const auto entry = processes_.find(key);
      if (key.empty() || entry == processes_.end()) {
        throw std::runtime_error("replay: no recorded process for " + spec.log_path.string() +
                                 " in " + (dir_ / "processes.json").string() +
                                 " (tests/runner/fixtures/replay/capture.sh records it)");
      }
      if (entry->contains("cold_start")) observer.on_cold_start(i, entry->at("cold_start"));
      observer.on_start(i);
      const Places p = places(spec.cwd, out_);
      for (const fs::path& file : files_of(spec)) {
        const std::string rel = relative_to(file, out_);
        if (!rel.empty() && fs::exists(dir_ / rel))
          write_file(file, from_tokens(read_file(dir_ / rel), p));
      }
      ProcessResult r = result_of(*entry);
      r.finished_at = std::chrono::system_clock::now();
      r.started_at =
          r.finished_at - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                              std::chrono::duration<double>(r.duration_s));
      observer.on_finish(i, r);
      observer.on_tick();
    }
    return true;
  }

 private:
  fs::path dir_, out_;
  json processes_ = json::object();    ///< by log path: how each process ended
  json warm_starts_ = json::object();  ///< by batch: the warm start the pool reported
};

class ReplayProbes final : public RunProbes {
 public:
  ReplayProbes(const fs::path& dir, fs::path out)
      : out_(std::move(out)),
        recorded_(dir.empty() ? json::object()
                              : read_json(dir / "environment.json", json::object())) {}
  GitCheckout git_checkout(const fs::path& root) override {
    const json found = next("git", root);
    return {found.value("commit", ""), found.value("toplevel", "")};
  }
  std::future<json> start_environment(const std::string& /*interpreter*/,
                                      const Environment& /*env*/, const fs::path& root) override {
    return ready(next("environments", root));
  }

 private:
  // The answers in the order they were given; the last one again once they run out.
  json next(const char* key, const fs::path& root) {
    const auto answers = recorded_.find(key);
    if (answers == recorded_.end() || answers->empty()) return json::object();
    const json& answer = answers->at(std::min(given_[key]++, answers->size() - 1));
    return json::parse(from_tokens(answer.dump(), places(root, out_)));
  }
  fs::path out_;
  json recorded_;
  std::map<std::string, std::size_t> given_;
};

template <typename Runner, typename Probes>
class Services final : public ServiceSet {
 public:
  Services(std::unique_ptr<Runner> runner, std::unique_ptr<Probes> probes)
      : runner_(std::move(runner)), probes_(std::move(probes)) {}
  RunServices get(RunSink& events) override { return {*runner_, *probes_, events}; }

 private:
  std::unique_ptr<Runner> runner_;
  std::unique_ptr<Probes> probes_;
};

}  // namespace

std::unique_ptr<ServiceSet> recording_services(const Environment& runner_env, const fs::path& dir,
                                               const fs::path& out) {
  return std::make_unique<Services<RecordingRunner, RecordingProbes>>(
      std::make_unique<RecordingRunner>(dir, out),
      std::make_unique<RecordingProbes>(runner_env, dir, out));
}

std::unique_ptr<ServiceSet> replay_services(const fs::path& dir, const fs::path& out) {
  return std::make_unique<Services<ReplayRunner, ReplayProbes>>(
      std::make_unique<ReplayRunner>(dir, out), std::make_unique<ReplayProbes>(dir, out));
}

}  // namespace devshim::testing
