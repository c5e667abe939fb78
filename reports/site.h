// `runner site -o DIR`: a static site of a database's runs that works from file:// and on any
// static host, with no server and no external asset (docs/report-format.md, "The site"):
//
//   DIR/index.html                 every suite with its newest run, the table of every run
//   DIR/suites/<slug>/index.html   a suite's trend charts (uPlot, inlined) and its runs
//   DIR/runs/<id>/report.html|md   each run's reports, linked to its baseline's and previous
//                                  run's pages in the site
//   DIR/gaps.html                  the API gap log, each entry's first-seen / last-seen / fixed
//   DIR/site.json                  what was built, so that the next build rewrites only what
//                                  changed (SiteManifest)
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/results/gap_log.h"
#include "runner/results/store.h"

namespace devshim {

/// What a page of the site shows of one run: a row of the runs table and a point of each chart.
struct SiteRun {
  RunRecord run;
  RunVersions versions;
  std::string policy;     ///< comparable_policy; empty for a baseline run
  std::string suite_dir;  ///< the suite's folder name under suites/ (site_slugs)
  /// run_summary of its report (reports/report.h): counts, pass rate, duration, comparisons.
  nlohmann::json summary;
};

/// Folder names for suites under suites/: letters, digits, '.', '-' and '_' kept, anything else
/// '_'; "suite" for a name left empty or dots only; "-2", "-3", … where two names would meet.
/// In the order of names given, each once.
std::map<std::string, std::string> site_slugs(const std::vector<std::string>& suites);

/// The pages (reports/site_pages.cpp). Runs are newest first; links are relative to the page.
std::string render_site_index(const std::vector<SiteRun>& runs, const std::string& db_name);
std::string render_site_suite(const std::string& suite, const std::vector<SiteRun>& runs);
std::string render_site_gaps(const std::vector<GapEntry>& gaps,
                             const std::map<std::int64_t, std::string>& run_pages);

struct SiteOptions {
  std::filesystem::path dir;
  std::string suite;  ///< only this suite's runs; empty: every suite
  bool full = false;  ///< render every run's pages again, whatever site.json says
};

struct SiteResult {
  int runs = 0;            ///< runs in the site
  int pages_rendered = 0;  ///< runs whose report pages were rendered by this build
  int pages_removed = 0;   ///< runs no longer in the database (or the suite) whose pages went
  int files_written = 0;   ///< files whose content changed (index pages included)
};

/// Builds or updates the site in options.dir from store: a run's report pages are rendered when
/// site.json does not hold the same fingerprint for it (its status, end, summary, baseline and
/// previous run, and the devshim version), on one thread per core (each but the caller's with its
/// own connection to store's database), and a file is written only when its content changed.
/// Runs still running are left out. Throws UsageError for a --suite with no run, RuntimeError
/// when the folder cannot be written.
SiteResult build_site(Store& store, const SiteOptions& options);

/// `runner site -o DIR [--suite S] [--full]`: build_site, then one line saying what it did.
int site_command(const std::filesystem::path& db_path, const SiteOptions& options);

}  // namespace devshim
