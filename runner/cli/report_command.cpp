#include "runner/cli/report_command.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "base/error.h"
#include "reports/report.h"
#include "reports/write_reports.h"
#include "runner/results/run_folder.h"
#include "runner/results/store.h"

namespace devshim {

namespace fs = std::filesystem;

int report_command(const fs::path& db_path, const std::string& run, const std::string& formats,
                   const std::string& dir, const std::string& against) {
  if (!fs::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  const auto wanted = parse_report_formats(formats);  // refused before the database is opened
  Store store(db_path, against.empty() ? Store::Purpose::kWrite : Store::Purpose::kRead);
  const RunRecord found = store.resolve_run(run);
  const std::optional<RunRecord> other =
      against.empty() ? std::nullopt : std::optional(store.resolve_run(against));
  if (dir.empty()) {
    if (auto owner = foreign_owner(found.out_dir, db_path)) {
      throw UsageError(fmt::format(
          "run {}'s folder {} belongs to database {} ({} is a copy?): give -o DIR to render "
          "its reports elsewhere",
          found.id, found.out_dir, owner->string(), db_path.string()));
    }
  }
  fs::path out = dir.empty() ? fs::path(found.out_dir) : fs::path(dir);
  std::vector<fs::path> written;
  if (other) {  // the run's own summary stays: it is the run against its previous run
    if (dir.empty()) out /= fmt::format("against-{}", other->id);
    create_report_folder(out);
    written = write_reports(build_report(store, found.id, out, other->id), out, wanted);
  } else {
    written = write_reports(store, found.id, out, formats);
  }
  for (const auto& p : written) fmt::print("{}\n", p.string());
  return kExitOk;
}

}  // namespace devshim
