#include "runner/cli/compare_command.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "runner/base/error.h"
#include "runner/base/printable.h"
#include "runner/results/comparison.h"
#include "runner/results/store.h"

namespace devshim {

namespace {

using nlohmann::json;

// What makes two runs differ besides their tests: from the run and its probed environment.
json run_json(const RunRecord& r) {
  const json env = json::parse(r.environment.empty() ? "{}" : r.environment, nullptr, false);
  const json shim = env.is_object() && env.contains("shim") ? env["shim"] : json(nullptr);
  auto env_text = [&](const char* key) {
    return env.is_object() && env.contains(key) && env[key].is_string() ? env[key] : json(nullptr);
  };
  return {{"id", r.id},
          {"suite", r.suite},
          {"mode", r.mode},
          {"status", r.status},
          {"started_at", r.started_at},
          {"host", r.host},
          {"project_commit", r.project_commit.empty() ? json(nullptr) : json(r.project_commit)},
          {"policy", shim.is_object() ? shim.value("policy", json(nullptr)) : json(nullptr)},
          {"shim_version", shim.is_object() ? shim.value("version", json(nullptr)) : json(nullptr)},
          {"torch", env_text("torch")},
          {"python", env_text("python")}};
}

std::string text_or_dash(const json& j) { return j.is_string() ? j.get<std::string>() : "-"; }

json comparison_json(const RunComparison& c) {
  json tests = json::object();
  for (const auto& [cls, list] : c.tests) {
    json items = json::array();
    for (const auto& t : list) {
      items.push_back(
          {{"file", t.file},
           {"classname", t.classname},
           {"name", t.name},
           {"a", t.status_a},
           {"b", t.status_b},
           {"message", t.message.empty() ? json(nullptr) : json(t.message)},
           {"source", t.source.line > 0 ? json{{"path", t.source.path}, {"line", t.source.line}}
                                        : json(nullptr)}});
    }
    tests[cls] = std::move(items);
  }
  return {{"a", run_json(c.a)}, {"b", run_json(c.b)}, {"counts", c.counts}, {"tests", tests}};
}

void print_comparison(const RunComparison& c) {
  for (const auto& [label, run] : {std::pair{"A", &c.a}, std::pair{"B", &c.b}}) {
    const json r = run_json(*run);
    fmt::print("{}: run {}  {}  {}  policy {}  shim {}  torch {}  {}  {}{}\n", label, run->id,
               printable(run->suite), run->mode, text_or_dash(r["policy"]),
               text_or_dash(r["shim_version"]), text_or_dash(r["torch"]), run->started_at,
               printable(run->host),
               run->project_commit.empty() ? "" : "  @ " + run->project_commit.substr(0, 12));
  }
  fmt::print("\n{:<14} {:>6}  meaning\n", "class", "tests");
  for (const auto& [cls, meaning] : comparison_classes()) {
    fmt::print("{:<14} {:>6}  {}\n", cls, c.counts.at(cls), meaning);
  }
  for (const auto& [cls, meaning] : comparison_classes()) {
    const auto it = c.tests.find(cls);
    if (it == c.tests.end()) continue;
    fmt::print("\n{} ({}):\n", cls, it->second.size());
    for (const auto& t : it->second) {
      std::string message = t.message;
      if (message.size() > 160) message = message.substr(0, 157) + "...";
      fmt::print("  {}::{}::{}  {} -> {}{}\n", printable(t.file), printable(t.classname),
                 printable(t.name), t.status_a, t.status_b,
                 message.empty() ? "" : "  " + printable(message));
    }
  }
}

}  // namespace

int compare_command(const std::filesystem::path& db_path, const std::string& a,
                    const std::string& b, bool as_json) {
  if (!std::filesystem::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  Store store(db_path, Store::Purpose::kRead);
  const RunComparison c = compare_runs(store, store.resolve_run(a), store.resolve_run(b));
  if (as_json) {
    fmt::print("{}\n", comparison_json(c).dump(2, ' ', false, json::error_handler_t::replace));
  } else {
    print_comparison(c);
  }
  return kExitOk;
}

}  // namespace devshim
