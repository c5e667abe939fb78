#include "runner/cli/gaps_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/error.h"
#include "base/printable.h"
#include "runner/cli/process_environment.h"
#include "runner/engine/launch_plan.h"
#include "runner/engine/process_pool.h"
#include "runner/results/native_id.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Lists torch's public CUDA surface and what devshim declares it carries, as one JSON object.
constexpr const char* kScanScript = R"py(
import inspect, json
import torch, torch.cuda, torch.cuda.amp, torch.backends.cuda, torch.backends.cudnn
import devshim
surface = set()
def public(module, prefix):
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name, None)
        if obj is None or inspect.ismodule(obj) or not callable(obj):
            continue
        if getattr(obj, "__module__", "") in ("typing", "typing_extensions", "builtins"):
            continue
        surface.add(prefix + name)
public(torch.cuda, "torch.cuda.")
public(torch.cuda.amp, "torch.cuda.amp.")
public(torch.backends.cuda, "torch.backends.cuda.")
public(torch.backends.cudnn, "torch.backends.cudnn.")
for cls, prefix in ((torch.Tensor, "torch.Tensor."), (torch.nn.Module, "torch.nn.Module.")):
    for name in dir(cls):
        if "cuda" in name.lower() and not name.startswith("_"):
            surface.add(prefix + name)
print(json.dumps({"torch": torch.__version__, "surface": sorted(surface),
                  "carried": devshim.carried_apis() + devshim.raising_apis()}))
)py";

std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

GapLog open_log(Store& store) { return GapLog(store); }

void require_db(const fs::path& db) {
  if (!fs::exists(db)) throw UsageError(fmt::format("{}: no such database (--db)", db.string()));
}

}  // namespace

std::string gaps_markdown(const std::vector<GapEntry>& entries) {
  std::string out =
      "| suite | API | kind | status | severity | tests | first seen | last seen | action | "
      "equivalent | trial | note |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& e : entries) {
    out += fmt::format(
        "| {} | `{}` | {} | {}{} | {}{} | {} | {} | {} | {}{} | {}{} | {} | {} |\n",
        e.suite.empty() ? "-" : cell(e.suite), cell(e.api), e.kind, e.status,
        e.status_by_person ? " (set)" : "", e.severity, e.severity_by_person ? " (set)" : "",
        e.tests,
        e.first_seen_run > 0 ? fmt::format("run {}", e.first_seen_run)
                             : e.first_seen_at.substr(0, 10),
        e.last_seen_run > 0 ? fmt::format("run {}", e.last_seen_run) : e.last_seen_at.substr(0, 10),
        cell(e.action), e.action_by_person ? " (set)" : "", cell(e.equivalent),
        e.equivalent_by_person ? " (set)" : "", cell(gap_trial_text(e.trial)), cell(e.note));
  }
  return out;
}

std::string gaps_json(const std::vector<GapEntry>& entries) {
  json list = json::array();
  for (const auto& e : entries) {
    json tests = json::array();
    auto opt_run = [](std::int64_t r) { return r > 0 ? json(r) : json(nullptr); };
    for (const auto& t : e.test_list) {
      tests.push_back({{"file", t.file},
                       {"classname", t.classname},
                       {"name", t.name},
                       {"carried_from", opt_run(t.carried_from)}});
    }
    auto opt_text = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
    list.push_back({{"suite", e.suite.empty() ? json(nullptr) : json(e.suite)},
                    {"api", e.api},
                    {"kind", e.kind},
                    {"status", e.status},
                    {"status_set_by_person", e.status_by_person},
                    {"severity", e.severity},
                    {"severity_set_by_person", e.severity_by_person},
                    {"tests", e.tests},
                    {"files", e.files},
                    {"test_list", std::move(tests)},
                    {"first_seen_run", opt_run(e.first_seen_run)},
                    {"last_seen_run", opt_run(e.last_seen_run)},
                    {"fixed_in_run", opt_run(e.fixed_in_run)},
                    {"equivalent", opt_text(e.equivalent)},
                    {"equivalent_set_by_person", e.equivalent_by_person},
                    {"action", opt_text(e.action)},
                    {"action_set_by_person", e.action_by_person},
                    {"setting", opt_text(e.setting)},
                    {"trial", gap_trial_json(e.trial)},
                    {"lost_by_file", e.kind == kGapFileError ? json(lost_by_file(e)) : json()},
                    {"note", opt_text(e.note)},
                    {"why", opt_text(e.why)}});
  }
  return list.dump(1) + "\n";
}

int gaps_list(const fs::path& db, const std::string& status, const std::string& kind,
              const std::optional<std::string>& suite) {
  require_db(db);
  Store store(db, Store::Purpose::kRead);
  auto log = open_log(store);
  std::vector<GapEntry> shown;
  std::size_t suite_width = 5;  // "SUITE"
  for (auto& e : log.list(suite)) {
    if ((!status.empty() && e.status != status) || (!kind.empty() && e.kind != kind)) continue;
    suite_width = std::max(suite_width, printable(e.suite).size());
    shown.push_back(std::move(e));
  }
  // The API last: unattributed entries are named by their message (up to 130 characters), and
  // a padded first column pushed every other column off a terminal. Suite "-": torch's surface.
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const GapEntry& e = shown[i];
    if (i == 0) {
      fmt::print("{:>5}  {:<9} {:<8} {:<15} {:<9} {:<{}} {}\n", "TESTS", "SEVERITY", "STATUS",
                 "KIND", "LAST SEEN", "SUITE", suite_width, "API");
    }
    fmt::print("{:>5}  {:<9} {:<8} {:<15} {:<9} {:<{}} {}\n", e.tests, e.severity, e.status, e.kind,
               e.last_seen_run > 0 ? fmt::format("run {}", e.last_seen_run) : e.last_seen_at,
               e.suite.empty() ? "-" : printable(e.suite), suite_width, printable(e.api));
  }
  if (shown.empty()) {
    fmt::print("No gap entries{}.\n", status.empty() && kind.empty() && !suite ? "" : " match");
  }
  return kExitOk;
}

namespace {

void show_entry(Store& store, const GapEntry& e) {
  fmt::print("{}\n  suite     {}\n  kind      {}\n  status    {}{}\n  severity  {}{}\n", e.api,
             e.suite.empty() ? "- (torch's surface, or entered by a person)" : e.suite, e.kind,
             e.status, e.status_by_person ? " (set by a person)" : "", e.severity,
             e.severity_by_person ? " (set by a person)" : " (from impact)");
  fmt::print("  seen      first {}, last {}{}\n",
             e.first_seen_run > 0 ? fmt::format("run {}", e.first_seen_run) : e.first_seen_at,
             e.last_seen_run > 0 ? fmt::format("run {}", e.last_seen_run) : e.last_seen_at,
             e.fixed_in_run > 0 ? fmt::format("; fixed in run {}", e.fixed_in_run) : "");
  if (!e.why.empty()) fmt::print("  why       {}\n", e.why);
  if (!e.action.empty()) {
    fmt::print("  action    {}{}\n", e.action, e.action_by_person ? " (set by a person)" : "");
  }
  if (!e.equivalent.empty()) {
    fmt::print("  on {:<6} {}{}\n", "device", e.equivalent,
               e.equivalent_by_person ? " (set by a person)" : "");
  }
  if (!e.setting.empty()) {
    fmt::print("  setting   {} (runner SUITE --differential --try-settings tries it)\n", e.setting);
  }
  if (!e.trial.setting.empty()) fmt::print("  trial     {}\n", gap_trial_text(e.trial));
  if (!e.note.empty()) fmt::print("  note      {}\n", e.note);
  fmt::print("  tests     {} in {} file{} (run {})\n", e.tests, e.files, e.files == 1 ? "" : "s",
             e.last_seen_run);
  for (const auto& [file, lost] : lost_by_file(e)) {
    fmt::print("    {} lost {} test{} of the baseline\n", file, lost, lost == 1 ? "" : "s");
  }
  // Named as the run that showed them names them (runner/results/native_id.h).
  const RunRecord run = store.run(e.last_seen_run).value_or(RunRecord{});
  for (const auto& t : e.test_list) {
    fmt::print("    {}{}\n", printable(test_label(run, t.file, t.classname, t.name)),
               t.carried_from > 0 ? fmt::format("  (last run in run {})", t.carried_from) : "");
  }
}

}  // namespace

int gaps_show(const fs::path& db, const std::string& api, const std::optional<std::string>& suite) {
  require_db(db);
  Store store(db, Store::Purpose::kRead);
  GapLog log = open_log(store);
  std::vector<GapEntry> entries;
  if (suite) {
    if (auto e = log.entry(api, suite)) entries.push_back(std::move(*e));
  } else {
    entries = log.entries(api);
  }
  if (entries.empty()) {
    throw UsageError(fmt::format("no gap entry for \"{}\"{} (see `runner gaps list`)", api,
                                 suite ? fmt::format(" of suite \"{}\"", *suite) : ""));
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) fmt::print("\n");
    show_entry(store, entries[i]);
  }
  return kExitOk;
}

int gaps_set(const fs::path& db, const std::string& api, const GapEdit& edit) {
  fs::create_directories(fs::absolute(db).parent_path());
  std::string suite;
  {
    Store store(db);
    suite = open_log(store).set(api, edit);
  }
  return gaps_show(db, api, suite);
}

int gaps_scan(const fs::path& db, const std::string& python, const fs::path& shim_dir) {
  if (!fs::exists(shim_dir / "devshim" / "__init__.py")) {
    throw UsageError(fmt::format("{} holds no devshim package (--shim-dir)", shim_dir.string()));
  }
  Environment env = runner_environment();
  env.erase("ACTIVATE_TORCH_DEVICE");  // the surface of torch itself, not as the shim shows it
  auto path = env.find("PYTHONPATH");
  env["PYTHONPATH"] =
      shim_dir.string() +
      (path == env.end() || path->second.empty() ? std::string() : ":" + path->second);
  const std::string interpreter = find_executable(python, env);
  if (interpreter.empty()) throw UsageError(fmt::format("python \"{}\" not found", python));
  auto out = capture_output({interpreter, "-c", kScanScript}, fs::current_path(),
                            std::chrono::seconds(300), env);
  if (!out) {  // most often an interpreter without torch: the user must name another
    throw UsageError(fmt::format(
        "{} could not list torch's CUDA surface: give --python an interpreter that has torch "
        "(try: {} -c 'import torch')",
        interpreter, interpreter));
  }
  json scan =
      json::parse(out->substr(out->rfind("\n{") == std::string::npos ? 0 : out->rfind("\n{") + 1),
                  nullptr, false);
  if (!scan.is_object() || !scan.contains("surface") || !scan.contains("carried")) {
    throw RuntimeError("the scan printed no usable JSON");
  }
  const auto surface = scan["surface"].get<std::vector<std::string>>();
  const auto carried = scan["carried"].get<std::vector<std::string>>();
  fs::create_directories(fs::absolute(db).parent_path());
  Store store(db);
  auto [added, fixed] = open_log(store).apply_scan(surface, carried);
  std::size_t uncarried = 0;
  for (const auto& api : surface) {
    if (std::find(carried.begin(), carried.end(), api) == carried.end()) ++uncarried;
  }
  fmt::print(
      "torch {}: {} public CUDA APIs, the shim carries {} of them; {} unpatched ({} new), {} "
      "marked fixed\n",
      scan.value("torch", std::string("?")), surface.size(), surface.size() - uncarried, uncarried,
      added, fixed);
  return kExitOk;
}

int gaps_export(const fs::path& db, const std::string& format, const fs::path& out,
                const std::optional<std::string>& suite) {
  if (format != "md" && format != "json") {
    throw UsageError(fmt::format("--format must be md or json, not \"{}\"", format));
  }
  require_db(db);
  Store store(db, Store::Purpose::kRead);
  auto log = open_log(store);
  std::vector<GapEntry> entries;
  for (const auto& e : log.list(suite)) entries.push_back(*log.entry(e.api, e.suite));
  std::string text;
  if (format == "json") {
    text = gaps_json(entries);
  } else {
    int open = 0;
    for (const auto& e : entries) open += e.status == "open" ? 1 : 0;
    text = fmt::format(
        "# devshim API gap log\n\nWhat the shim does not carry well yet: {} entries, {} open. "
        "Generated by `runner gaps export --format md` from {}; hand-set fields are marked "
        "(set).\n\n",
        entries.size(), open, db.filename().string());
    text += gaps_markdown(entries);
  }
  if (out.empty()) {
    std::fputs(text.c_str(), stdout);
    return kExitOk;
  }
  const fs::path tmp = out.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw UsageError(fmt::format("cannot write {}", out.string()));
    f << text;
  }
  fs::rename(tmp, out);
  fmt::print("{}\n", out.string());
  return kExitOk;
}

}  // namespace devshim
