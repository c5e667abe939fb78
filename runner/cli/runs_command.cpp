#include "runner/cli/runs_command.h"

#include <fmt/format.h>

#include "runner/base/error.h"
#include "runner/results/status.h"
#include "runner/results/store.h"

namespace devshim {

int list_runs(const std::filesystem::path& db_path, int limit) {
  if (!std::filesystem::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  Store store(db_path, Store::Purpose::kRead);
  auto runs = store.runs(limit);
  if (runs.empty()) {
    fmt::print("no runs in {}\n", db_path.string());
    return kExitOk;
  }
  fmt::print("{:>5}  {:<20} {:<8} {:<11} {:<20} {}\n", "run", "suite", "mode", "status",
             "started (UTC)", "files");
  for (const auto& r : runs) {
    fmt::print("{:>5}  {:<20} {:<8} {:<11} {:<20} {}\n", r.id, r.suite, r.mode, r.status,
               r.started_at, counts_text(store.file_status_counts(r.id)));
  }
  return kExitOk;
}

}  // namespace devshim
