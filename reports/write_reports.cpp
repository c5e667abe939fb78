#include "reports/write_reports.h"

#include <fmt/format.h>

#include <fstream>

#include "reports/html.h"
#include "reports/json_report.h"
#include "reports/junit_xml.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "runner/error.h"

namespace devshim {

namespace fs = std::filesystem;

const std::vector<std::string>& report_formats() {
  static const std::vector<std::string> formats{"md", "json", "junit", "html"};
  return formats;
}

namespace {

void write_atomically(const fs::path& path, const std::string& text) {
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

}  // namespace

std::vector<fs::path> write_reports(Store& store, std::int64_t run_id, const fs::path& dir,
                                    const std::vector<std::string>& formats) {
  for (const auto& f : formats) {
    if (std::find(report_formats().begin(), report_formats().end(), f) == report_formats().end()) {
      throw UsageError(fmt::format("unknown report format \"{}\" (md, json, junit, html)", f));
    }
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot create: {}", dir.string(), ec.message()));
  const Report report = build_report(store, run_id, dir);
  std::vector<fs::path> written;
  for (const auto& f : formats) {
    fs::path path;
    std::string text;
    if (f == "md") {
      path = dir / "report.md";
      text = render_markdown(report);
    } else if (f == "json") {
      path = dir / "report.json";
      text = dump_report_json(render_json(report));
    } else if (f == "junit") {
      path = dir / "junit.xml";
      text = render_junit(report);
    } else {
      path = dir / "report.html";
      text = render_html(report);
    }
    write_atomically(path, text);
    written.push_back(path);
  }
  return written;
}

int report_command(const fs::path& db_path, const std::string& run, const std::string& formats,
                   const std::string& dir) {
  if (!fs::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  Store store(db_path);
  const RunRecord found = store.resolve_run(run);
  const RunRecord* rec = &found;
  const std::int64_t id = found.id;
  std::vector<std::string> wanted;
  std::string current;
  for (char c : formats + ",") {
    if (c == ',') {
      if (!current.empty()) wanted.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (wanted.empty()) wanted = report_formats();
  const fs::path out = dir.empty() ? fs::path(rec->out_dir) : fs::path(dir);
  for (const auto& p : write_reports(store, id, out, wanted)) fmt::print("{}\n", p.string());
  return kExitOk;
}

}  // namespace devshim
