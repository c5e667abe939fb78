// The report formats, and writing a run's reports to a folder, as the run ends and on demand
// (`runner report`).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "reports/report.h"
#include "runner/results/store.h"

namespace devshim {

/// One report format: its name on the command line, the file it is written to, its renderer.
struct ReportFormat {
  const char* name;
  const char* file;
  std::string (*render)(const Report&);
};

/// Every format, in the order reports are written and listed: md (report.md), json
/// (report.json), junit (junit.xml), html (report.html). Nothing else names the formats.
const std::vector<ReportFormat>& report_formats();

/// The names joined: "md, json, junit, html" (separator ", "), "md,json,junit,html" (",").
std::string report_format_names(const char* separator = ", ");

/// The formats of a comma-separated list of names, in the order given, each once; empty names
/// are skipped, and a list with none means every format. Throws UsageError for an unknown name.
std::vector<const ReportFormat*> parse_report_formats(const std::string& names);

/// Writes text to path through a temporary name and a rename, so that a reader never sees half
/// a file. Throws RuntimeError when it cannot.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

/// Creates dir and its parents. Throws RuntimeError when it cannot.
void create_report_folder(const std::filesystem::path& dir);

/// Writes report in each format into dir (created); returns the paths written. Each file is
/// written to a temporary name and renamed, so a reader never sees half a report. Throws
/// RuntimeError when dir cannot be written.
std::vector<std::filesystem::path> write_reports(const Report& report,
                                                 const std::filesystem::path& dir,
                                                 const std::vector<const ReportFormat*>& formats);

/// Builds run_id's report from store once (links relative to dir) and writes it into dir in the
/// formats named (parse_report_formats: empty means every format). Throws UsageError for an
/// unknown run or format, RuntimeError when dir cannot be written.
std::vector<std::filesystem::path> write_reports(Store& store, std::int64_t run_id,
                                                 const std::filesystem::path& dir,
                                                 const std::string& formats = "");

}  // namespace devshim
