// Writing a run's reports to a folder, as the run ends and on demand (`runner report`).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/store.h"

namespace devshim {

/// The formats: "md" (report.md), "json" (report.json), "junit" (junit.xml), "html"
/// (report.html).
const std::vector<std::string>& report_formats();

/// Renders run_id from store into dir (created) in each format; returns the paths written.
/// Each file is written to a temporary name and renamed, so a reader never sees half a report.
/// Throws UsageError for an unknown format or run, RuntimeError when dir cannot be written.
std::vector<std::filesystem::path> write_reports(Store& store, std::int64_t run_id,
                                                 const std::filesystem::path& dir,
                                                 const std::vector<std::string>& formats);

/// `runner report [RUN] [--format md,json,junit,html] [-o DIR]`: dir defaults to the run's own
/// output folder. Prints the paths written. RUN is an id or "latest".
int report_command(const std::filesystem::path& db_path, const std::string& run,
                   const std::string& formats, const std::string& dir);

}  // namespace devshim
