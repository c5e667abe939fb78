#include "runner/cli/prune_command.h"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <optional>
#include <set>

#include "base/error.h"
#include "runner/results/run_folder.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

// Removes dir and the folders above it up to (and including) top while they are empty.
void remove_empty_up_to(fs::path dir, const fs::path& top) {
  std::error_code ec;
  while (!dir.empty() && dir.string().size() >= top.string().size()) {
    if (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec) || !fs::remove(dir, ec)) return;
    if (dir == top) return;
    dir = dir.parent_path();
  }
}

// Removes each folder's listed outputs (never anything outside the folder), then the folders
// left empty. Returns how many files went.
std::uintmax_t remove_outputs(
    const std::vector<std::pair<fs::path, std::vector<fs::path>>>& outputs) {
  std::uintmax_t removed = 0;
  for (const auto& [dir, rels] : outputs) {
    std::error_code ec;
    std::set<fs::path> parents;
    for (const auto& rel : rels) {
      const fs::path p = (dir / rel).lexically_normal();
      if (p.string().rfind(dir.lexically_normal().string(), 0) != 0) continue;  // never outside
      if (!fs::exists(fs::symlink_status(p, ec))) continue;
      removed += fs::is_directory(p, ec) ? fs::remove_all(p, ec) : fs::remove(p, ec) ? 1 : 0;
      parents.insert(p.parent_path());
    }
    for (auto it = parents.rbegin(); it != parents.rend(); ++it) remove_empty_up_to(*it, dir);
    remove_empty_up_to(dir / "logs", dir);
  }
  return removed;
}

}  // namespace

std::vector<fs::path> run_outputs(const std::vector<FileRecord>& files) {
  std::vector<fs::path> out{"run.log",         "report.md",           "report.json",
                            "junit.xml",       "report.html",         "reruns",
                            "zygote-shim.log", "zygote-baseline.log", kRunFolderMarker};
  for (const auto& f : files) {
    for (auto& p : file_outputs(f)) out.push_back(std::move(p));
    // The shim's lock of the redirection record goes too, or the folder never empties.
    if (!f.log_path.empty()) out.push_back(f.log_path + ".redirections.json.lock");
  }
  return out;
}

int prune_command(const PruneOptions& o) {
  if (o.keep <= 0 && o.older_than_days <= 0) {
    throw UsageError("runner prune: give --keep N (runs to keep per suite) or --older-than DAYS");
  }
  if (!fs::exists(o.db))
    throw UsageError(fmt::format("{}: no such database (--db)", o.db.string()));
  Store store(o.db);
  std::string cutoff;
  if (o.older_than_days > 0) {
    const auto age = std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::duration<double>(o.older_than_days * 86400.0));
    cutoff = iso8601_utc(std::chrono::system_clock::now() - age);
  }
  const std::vector<RunRecord> doomed = store.prunable_runs(o.keep, cutoff, o.suite);
  if (doomed.empty()) {
    fmt::print("runner: nothing to prune in {}\n", o.db.string());
    return kExitOk;
  }
  std::set<std::int64_t> doomed_ids;
  for (const auto& r : doomed) doomed_ids.insert(r.id);
  std::set<std::string> kept_out_dirs;
  for (const auto& r : store.runs(INT_MAX)) {
    if (doomed_ids.count(r.id) == 0)
      kept_out_dirs.insert(fs::path(r.out_dir).lexically_normal().string());
  }
  // What goes from disk, collected before the rows that name it are deleted; each run's line
  // is printed only once it is true (a dry run says "would delete").
  std::vector<std::pair<fs::path, std::vector<fs::path>>> outputs;
  std::vector<std::string> lines;
  for (const auto& r : doomed) {
    const bool shared = kept_out_dirs.count(fs::path(r.out_dir).lexically_normal().string()) > 0;
    const std::optional<fs::path> owner =
        r.out_dir.empty() ? std::nullopt : foreign_owner(r.out_dir, o.db);
    lines.push_back(fmt::format(
        "run {} of {} ({}, {}, started {}){}", r.id, r.suite, r.mode, r.status, r.started_at,
        r.framework == "imported" ? " (imported: its logs stay)"
        : shared                  ? " (its output folder is a newer run's: it stays)"
        : owner ? fmt::format(" (its output folder {} is database {}'s: it stays)", r.out_dir,
                              owner->string())
                : " and " + r.out_dir));
    if (r.framework != "imported" && !shared && !owner && !r.out_dir.empty()) {
      std::vector<fs::path> rels = run_outputs(store.files(r.id));
      // The reports `runner report RUN --against OTHER` wrote beside the run's own.
      std::error_code ec;
      for (fs::directory_iterator it(r.out_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.starts_with("against-") && it->is_directory(ec)) rels.emplace_back(name);
      }
      outputs.emplace_back(r.out_dir, std::move(rels));
    }
  }
  if (o.dry_run) {
    for (const auto& line : lines) fmt::print("runner: would delete {}\n", line);
    fmt::print("runner: {} run{} would be deleted (--dry-run: nothing deleted)\n", doomed.size(),
               doomed.size() == 1 ? "" : "s");
    return kExitOk;
  }
  std::vector<std::int64_t> ids(doomed_ids.begin(), doomed_ids.end());
  try {
    store.delete_runs(ids);  // one transaction: all of them or none
  } catch (const RuntimeError& e) {
    throw RuntimeError(
        fmt::format("{}; nothing was pruned: no run, log or report deleted", e.what()));
  }
  const std::uintmax_t removed = remove_outputs(outputs);
  for (const auto& line : lines) fmt::print("runner: deleted {}\n", line);
  fmt::print("runner: pruned {} run{} from {}; {} output file{} removed\n", doomed.size(),
             doomed.size() == 1 ? "" : "s", o.db.string(), removed, removed == 1 ? "" : "s");
  return kExitOk;
}

}  // namespace devshim
