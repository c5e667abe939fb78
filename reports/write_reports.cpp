#include "reports/write_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "base/error.h"
#include "reports/html.h"
#include "reports/json_report.h"
#include "reports/junit_xml.h"
#include "reports/markdown.h"

namespace devshim {

namespace fs = std::filesystem;

const std::vector<ReportFormat>& report_formats() {
  static const std::vector<ReportFormat> formats{
      {"md", "report.md", render_markdown},
      {"json", "report.json", [](const Report& r) { return dump_report_json(render_json(r)); }},
      {"junit", "junit.xml", render_junit},
      {"html", "report.html", render_html},
  };
  return formats;
}

std::string report_format_names(const char* separator) {
  std::string names;
  for (const ReportFormat& f : report_formats()) {
    names += (names.empty() ? "" : separator) + std::string(f.name);
  }
  return names;
}

std::vector<const ReportFormat*> parse_report_formats(const std::string& names) {
  std::vector<const ReportFormat*> wanted;
  std::size_t start = 0;
  while (start <= names.size()) {
    std::size_t end = names.find(',', start);
    if (end == std::string::npos) end = names.size();
    const std::string name = names.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    const auto& all = report_formats();
    auto it =
        std::find_if(all.begin(), all.end(), [&](const ReportFormat& f) { return name == f.name; });
    if (it == all.end()) {
      throw UsageError(
          fmt::format("unknown report format \"{}\" ({})", name, report_format_names()));
    }
    if (std::find(wanted.begin(), wanted.end(), &*it) == wanted.end()) wanted.push_back(&*it);
  }
  if (wanted.empty()) {
    for (const ReportFormat& f : report_formats()) wanted.push_back(&f);
  }
  return wanted;
}

void write_file_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw RuntimeError(fmt::format("{}: cannot write", tmp.string()));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot write: {}", path.string(), ec.message()));
}

void create_report_folder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot create: {}", dir.string(), ec.message()));
}

std::vector<fs::path> write_reports(const Report& report, const fs::path& dir,
                                    const std::vector<const ReportFormat*>& formats) {
  create_report_folder(dir);
  std::vector<fs::path> written;
  for (const ReportFormat* f : formats) {
    const fs::path path = dir / f->file;
    write_file_atomically(path, f->render(report));
    written.push_back(path);
  }
  return written;
}

std::vector<fs::path> write_reports(Store& store, std::int64_t run_id, const fs::path& dir,
                                    const std::string& formats) {
  const std::vector<const ReportFormat*> wanted = parse_report_formats(formats);
  create_report_folder(dir);
  return write_reports(build_and_store_report(store, run_id, dir), dir, wanted);
}

}  // namespace devshim
