#include "reports/site.h"

#include <fmt/format.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "reports/html.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "reports/write_reports.h"
#include "runner/base/error.h"
#include "runner/base/printable.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// Changes when what the site's pages hold changes, so that site.json's fingerprints lapse.
constexpr int kSiteFormat = 1;
constexpr const char* kManifest = "site.json";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes text unless the file already holds it; true when it wrote.
bool write_if_changed(const fs::path& path, const std::string& text) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == text.size() &&
      read_text(path) == text) {
    return false;
  }
  create_report_folder(path.parent_path());
  write_file_atomically(path, text);
  return true;
}

// What a run's pages depend on besides the code that renders them.
std::string fingerprint(const RunRecord& r, const std::set<std::int64_t>& in_site) {
  auto linked = [&](std::int64_t id) { return in_site.count(id) > 0 ? id : 0; };
  const std::string key = fmt::format(
      "{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}", kSiteFormat, DEVSHIM_VERSION, r.status, r.finished_at,
      r.summary, linked(r.baseline_run), linked(r.previous_run), r.environment.size());
  return fmt::format("{:016x}", std::hash<std::string>{}(key));
}

// The run's report pages in the site: its baseline's and previous run's pages linked when they
// are in the site too. Returns the run's summary.
json render_run_pages(Store& store, const RunRecord& run, const fs::path& dir,
                      const std::set<std::int64_t>& in_site, int& files_written) {
  Report report = build_report(store, run.id, dir);
  auto page = [&](std::int64_t other, const char* file) {
    return in_site.count(other) > 0 ? fmt::format("../{}/{}", other, file) : std::string();
  };
  if (report.differential) {
    report.differential->baseline_md = page(run.baseline_run, "report.md");
    report.differential->baseline_html = page(run.baseline_run, "report.html");
  }
  if (report.previous) {
    report.previous->previous_md = page(report.previous->previous_run, "report.md");
    report.previous->previous_html = page(report.previous->previous_run, "report.html");
  }
  files_written += write_if_changed(dir / "report.html", render_html(report)) ? 1 : 0;
  files_written += write_if_changed(dir / "report.md", render_markdown(report)) ? 1 : 0;
  return run_summary(report);
}

json load_manifest(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / kManifest, ec)) return json::object();
  json m = json::parse(read_text(dir / kManifest), nullptr, /*allow_exceptions=*/false);
  if (!m.is_object() || !m.contains("runs") || !m["runs"].is_object()) return json::object();
  return m;
}

}  // namespace

std::map<std::string, std::string> site_slugs(const std::vector<std::string>& suites) {
  std::map<std::string, std::string> out;
  std::set<std::string> taken;
  for (const std::string& suite : suites) {
    if (out.count(suite) > 0) continue;
    std::string slug;
    for (const char c : suite) {
      const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
      slug += keep ? c : '_';
    }
    if (slug.find_first_not_of('.') == std::string::npos) slug = "suite";
    std::string unique = slug;
    for (int n = 2; taken.count(unique) > 0; ++n) unique = fmt::format("{}-{}", slug, n);
    taken.insert(unique);
    out[suite] = unique;
  }
  return out;
}

SiteResult build_site(Store& store, const SiteOptions& o) {
  std::vector<RunRecord> runs;  // newest first
  for (auto& r : store.runs(-1)) {
    if (r.status == "running") continue;
    if (!o.suite.empty() && r.suite != o.suite) continue;
    runs.push_back(std::move(r));
  }
  if (!o.suite.empty() && runs.empty()) {
    throw UsageError(fmt::format("no finished run of suite \"{}\" in {}", printable(o.suite),
                                 store.path().string()));
  }
  std::set<std::int64_t> in_site;
  std::vector<std::string> suite_names;
  for (const auto& r : runs) {
    in_site.insert(r.id);
    suite_names.push_back(r.suite);
  }
  const std::map<std::string, std::string> slugs = site_slugs(suite_names);

  const json old = o.full ? json::object() : load_manifest(o.dir);
  json manifest{{"format", kSiteFormat},
                {"generator", "devshim runner " DEVSHIM_VERSION},
                {"database", store.path().string()},
                {"runs", json::object()}};
  SiteResult result;
  std::vector<SiteRun> rows;
  for (const RunRecord& r : runs) {
    const std::string id = std::to_string(r.id);
    const std::string print = fingerprint(r, in_site);
    const fs::path run_dir = o.dir / "runs" / id;
    json summary;
    std::error_code ec;
    if (old.contains("runs") && old["runs"].contains(id) &&
        old["runs"][id].value("fingerprint", "") == print &&
        fs::is_regular_file(run_dir / "report.html", ec)) {
      summary = old["runs"][id]["summary"];
    } else {
      summary = render_run_pages(store, r, run_dir, in_site, result.files_written);
      ++result.pages_rendered;
    }
    manifest["runs"][id] = {{"fingerprint", print}, {"summary", summary}};
    rows.push_back({r, run_versions(r), comparable_policy(r), slugs.at(r.suite), summary});
  }
  // Runs pruned from the database (or of another suite) leave the site.
  if (old.contains("runs")) {
    for (const auto& [id, entry] : old["runs"].items()) {
      if (manifest["runs"].contains(id)) continue;
      std::error_code ec;
      fs::remove_all(o.dir / "runs" / id, ec);
      ++result.pages_removed;
    }
  }

  std::map<std::int64_t, std::string> run_pages;
  for (const auto& row : rows)
    run_pages[row.run.id] = fmt::format("runs/{}/report.html", row.run.id);
  auto write = [&](const fs::path& path, const std::string& text) {
    result.files_written += write_if_changed(path, text) ? 1 : 0;
  };
  write(o.dir / "index.html", render_site_index(rows, store.path().filename().string()));
  for (const auto& [suite, slug] : slugs) {
    std::vector<SiteRun> of_suite;
    for (const auto& row : rows) {
      if (row.run.suite == suite) of_suite.push_back(row);
    }
    write(o.dir / "suites" / slug / "index.html", render_site_suite(suite, of_suite));
  }
  write(o.dir / "gaps.html", render_site_gaps(GapLog(store).list(), run_pages));
  write(o.dir / kManifest, manifest.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
  result.runs = static_cast<int>(rows.size());
  return result;
}

int site_command(const fs::path& db_path, const SiteOptions& options) {
  if (!fs::exists(db_path)) {
    throw UsageError(fmt::format("{}: no such database (--db)", db_path.string()));
  }
  if (options.dir.empty()) throw UsageError("runner site: give the folder to write with -o DIR");
  Store store(db_path, Store::Purpose::kRead);
  const SiteResult r = build_site(store, options);
  fmt::print("{}: {} runs; {} run{} rendered, {} removed, {} file{} written\n",
             (options.dir / "index.html").string(), r.runs, r.pages_rendered,
             r.pages_rendered == 1 ? "" : "s", r.pages_removed, r.files_written,
             r.files_written == 1 ? "" : "s");
  return kExitOk;
}

}  // namespace devshim
