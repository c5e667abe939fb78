#include "runner/cli/history_command.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "runner/base/error.h"
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

int history_command(const std::filesystem::path& db_path, const std::string& test,
                    const std::string& suite, int limit) {
  if (!std::filesystem::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  Store store(db_path, Store::Purpose::kRead);
  const std::vector<TestHistoryEntry> rows = store.test_history(test, suite, limit);
  if (rows.empty()) {
    throw UsageError(
        fmt::format("no recorded result for test \"{}\"{} in {} (give it as classname::name, "
                    "file::classname::name or classname.name, as `runner show` prints it)",
                    test, suite.empty() ? "" : " of suite " + suite, db_path.string()));
  }
  std::set<std::string> tests;
  std::map<std::string, int> counts;
  std::string timeline;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    tests.insert(it->file + "::" + it->test.classname + "::" + it->test.name);
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
      std::string label = e.file;
      label.append("::").append(e.test.classname).append("::").append(e.test.name);
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
