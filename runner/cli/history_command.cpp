#include "runner/cli/history_command.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "runner/results/native_id.h"
#include "runner/results/store.h"

namespace devshim {

char history_letter(const std::string& status, bool flaky) {
  if (flaky) return 'f';
  static const std::map<std::string, char> letters{{"passed", 'P'},  {"failed", 'F'},
                                                   {"error", 'E'},   {"skipped", 'S'},
                                                   {"xfailed", 'x'}, {"xpassed", 'X'}};
  auto it = letters.find(status);
  return it == letters.end() ? '?' : it->second;
}

namespace {

// The rows as JSON: one object per run, newest first.
nlohmann::json history_json(const std::vector<TestHistoryEntry>& rows) {
  using nlohmann::json;
  json out = json::array();
  for (const auto& e : rows) {
    out.push_back({{"run", e.run.id},
                   {"started_at", e.run.started_at},
                   {"suite", e.run.suite},
                   {"mode", e.run.mode},
                   {"file", e.file},
                   {"classname", e.test.classname},
                   {"name", e.test.name},
                   {"status", std::string(to_string(e.test.status))},
                   {"flaky", e.flaky},
                   {"attempts", e.attempts},
                   {"culprit", e.test.culprit.empty() ? json(nullptr) : json(e.test.culprit)},
                   {"duration_s", e.test.duration_s},
                   {"message", failure_text(e.test)}});
  }
  return out;
}

}  // namespace

int history_command(const std::filesystem::path& db_path, const std::string& test,
                    const HistoryFilter& filter, bool as_json) {
  const std::string& suite = filter.suite;
  if (!std::filesystem::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  Store store(db_path, Store::Purpose::kRead);
  const std::vector<TestHistoryEntry> rows =
      store.test_history(test, suite, filter.limit, filter.mode);
  if (rows.empty()) {
    throw UsageError(
        fmt::format("no recorded result for test \"{}\"{}{} in {} (give it as `runner show` prints "
                    "it: a pytest node "
                    "id, a unittest id, Suite.Test, or classname::name)",
                    test, suite.empty() ? "" : " of suite " + suite,
                    filter.mode.empty() ? "" : " in " + filter.mode + " runs", db_path.string()));
  }
  if (as_json) {
    fmt::print("{}\n",
               history_json(rows).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return kExitOk;
  }
  std::set<std::string> tests;
  std::map<std::string, int> counts;
  std::string timeline;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    tests.insert(test_label(it->run, it->file, it->test.classname, it->test.name));
    const std::string status(to_string(it->test.status));
    ++counts[it->flaky ? "flaky" : status];
    timeline += history_letter(status, it->flaky);
  }
  std::string summary;
  for (const auto& [status, n] : counts) {
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, status);
  }
  const bool several = tests.size() > 1;
  fmt::print("history of {}: {} run{} ({}), newest first\n",
             several ? fmt::format("{} tests named \"{}\"", tests.size(), test) : *tests.begin(),
             rows.size(), rows.size() == 1 ? "" : "s", summary);
  fmt::print(
      "timeline, oldest to newest: {}  (P passed, F failed, E error, S skipped, "
      "x xfailed, X xpassed, f flaky)\n",
      timeline);
  fmt::print("{:>5}  {:<20} {:<14} {:<8} {:<22} {:>8}  {}\n", "run", "started (UTC)", "suite",
             "mode", "status", "seconds", several ? "test / message" : "message");
  for (const auto& e : rows) {
    std::string status(to_string(e.test.status));
    if (e.flaky) status = fmt::format("flaky ({} attempts)", e.attempts);
    if (!e.test.culprit.empty()) status += " [" + e.test.culprit + "]";
    std::string message = failure_text(e.test);
    if (message.size() > 120) message = message.substr(0, 117) + "...";
    if (several) {
      std::string label = test_label(e.run, e.file, e.test.classname, e.test.name);
      if (!message.empty()) label.append("  ").append(message);
      message = std::move(label);
    }
    std::string line =
        fmt::format("{:>5}  {:<20} {:<14} {:<8} {:<22} {:>8.2f}  {}", e.run.id, e.run.started_at,
                    e.run.suite, e.run.mode, status, e.test.duration_s, message);
    line.erase(line.find_last_not_of(' ') + 1);
    fmt::print("{}\n", line);
  }
  return kExitOk;
}

}  // namespace devshim
