#include "reports/site.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "parsers/read_file.h"
#include "reports/case_outcomes.h"
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

// Writes text unless the file already holds it; true when it wrote.
bool write_if_changed(const fs::path& path, const std::string& text) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == text.size() &&
      read_file(path) == text) {
    return false;
  }
  create_report_folder(path.parent_path());
  write_file_atomically(path, text);
  return true;
}

// What a run's pages depend on besides the code that renders them; later: the runs of the site
// that name it as their previous run or baseline (its forward links).
std::string fingerprint(const RunRecord& r, const std::set<std::int64_t>& in_site,
                        const std::vector<std::int64_t>& later) {
  auto linked = [&](std::int64_t id) { return in_site.count(id) > 0 ? id : 0; };
  const std::string key =
      fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}", kSiteFormat, DEVSHIM_VERSION, r.status,
                  r.finished_at, r.summary, linked(r.baseline_run), linked(r.previous_run),
                  r.environment.size(), fmt::join(later, ","));
  return fmt::format("{:016x}", std::hash<std::string>{}(key));
}

struct RenderedRun {
  json summary;
  int files_written = 0;
};

// The run's report pages in the site: its baseline's, previous run's and later runs' pages
// linked when they are in the site too.
RenderedRun render_run_pages(Store& store, StatusReader& statuses, const RunRecord& run,
                             const fs::path& dir, const std::set<std::int64_t>& in_site) {
  RenderedRun out;
  Report report = build_report(store, run.id, dir, 0, ReportCases::kShown, &statuses);
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
  for (auto& later : report.later_runs) {
    later.md = page(later.run, "report.md");
    later.html = page(later.run, "report.html");
  }
  out.files_written += write_if_changed(dir / "report.html", render_html(report)) ? 1 : 0;
  out.files_written += write_if_changed(dir / "report.md", render_markdown(report)) ? 1 : 0;
  out.summary = run_summary(report);
  return out;
}

// Renders runs[i] for each i of todo, on up to one thread per core: this thread with store, the
// others each with their own connection to the same database. Each thread takes a contiguous
// part of todo (newest first), so that the run it renders next is mostly the previous run of the
// one before and its statuses are still in its StatusReader. The first error stops the rest and
// is rethrown here.
std::vector<RenderedRun> render_runs(Store& store, const std::vector<RunRecord>& runs,
                                     const std::vector<std::size_t>& todo, const fs::path& site,
                                     const std::set<std::int64_t>& in_site) {
  std::vector<RenderedRun> out(todo.size());
  std::atomic<bool> stop{false};
  std::mutex failed;
  std::exception_ptr error;
  const std::size_t threads =
      std::min<std::size_t>(std::max(1U, std::thread::hardware_concurrency()), todo.size());
  auto work = [&](Store& s, std::size_t part) {
    StatusReader statuses(s);
    const std::size_t end = todo.size() * (part + 1) / threads;
    for (std::size_t i = todo.size() * part / threads; i < end && !stop; ++i) {
      const RunRecord& r = runs[todo[i]];
      out[i] = render_run_pages(s, statuses, r, site / "runs" / std::to_string(r.id), in_site);
    }
  };
  auto guarded = [&](auto&& f) {
    try {
      f();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failed);
      if (!error) error = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < threads; ++t) {
    helpers.emplace_back([&, t] {
      guarded([&] {
        Store own(store.path(), Store::Purpose::kRead);
        work(own, t);
      });
    });
  }
  if (threads > 0) guarded([&] { work(store, 0); });
  for (auto& h : helpers) h.join();
  if (error) std::rethrow_exception(error);
  return out;
}

json load_manifest(const fs::path& dir) {
  const std::optional<std::string> text = read_file(dir / kManifest);
  if (!text) return json::object();
  json m = json::parse(*text, nullptr, /*allow_exceptions=*/false);
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
  std::map<std::int64_t, std::vector<std::int64_t>> later;  // run -> runs naming it, oldest first
  for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
    if (r->previous_run > 0) later[r->previous_run].push_back(r->id);
    if (r->baseline_run > 0 && r->baseline_run != r->previous_run) {
      later[r->baseline_run].push_back(r->id);
    }
  }

  const json old = o.full ? json::object() : load_manifest(o.dir);
  json manifest{{"format", kSiteFormat},
                {"generator", "devshim runner " DEVSHIM_VERSION},
                {"database", store.path().string()},
                {"runs", json::object()}};
  SiteResult result;
  // The runs whose pages are missing or stale are rendered, the others keep site.json's summary.
  std::vector<json> summaries(runs.size());
  std::vector<std::string> prints(runs.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string id = std::to_string(runs[i].id);
    prints[i] = fingerprint(runs[i], in_site, later[runs[i].id]);
    std::error_code ec;
    if (old.contains("runs") && old["runs"].contains(id) &&
        old["runs"][id].value("fingerprint", "") == prints[i] &&
        fs::is_regular_file(o.dir / "runs" / id / "report.html", ec)) {
      summaries[i] = old["runs"][id]["summary"];
    } else {
      todo.push_back(i);
    }
  }
  const std::vector<RenderedRun> rendered = render_runs(store, runs, todo, o.dir, in_site);
  for (std::size_t k = 0; k < todo.size(); ++k) {
    summaries[todo[k]] = rendered[k].summary;
    result.files_written += rendered[k].files_written;
  }
  result.pages_rendered = static_cast<int>(todo.size());
  std::vector<SiteRun> rows;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    manifest["runs"][std::to_string(r.id)] = {{"fingerprint", prints[i]},
                                              {"summary", summaries[i]}};
    rows.push_back({r, run_versions(r), comparable_policy(r), slugs.at(r.suite), summaries[i]});
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
