#include "runner/cli/site_command.h"

#include <fmt/format.h>

#include "base/error.h"
#include "runner/results/store.h"

namespace devshim {

namespace fs = std::filesystem;

int site_command(const fs::path& db_path, const SiteOptions& options) {
  if (!fs::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  if (options.dir.empty()) throw UsageError("runner site: give the folder to write with -o DIR");
  Store store(db_path, Store::Purpose::kRead);
  const SiteResult r = build_site(store, options);
  fmt::print("{}: {} runs; {} run{} rendered, {} removed, {} test page{}, {} file{} written{}\n",
             (options.dir / "index.html").string(), r.runs, r.pages_rendered,
             r.pages_rendered == 1 ? "" : "s", r.pages_removed, r.test_pages,
             r.test_pages == 1 ? "" : "s", r.files_written, r.files_written == 1 ? "" : "s",
             options.copy_files ? fmt::format(", {} linked file{} copied", r.files_copied,
                                              r.files_copied == 1 ? "" : "s")
                                : "");
  return kExitOk;
}

}  // namespace devshim
