// `runner site -o DIR`: a static site of a database's runs that works from file:// and on any
// static host, with no server and no external asset (docs/report-format.md, "The site"):
//
//   DIR/index.html                 every suite with its newest run, the table of every run
//   DIR/suites/<slug>/index.html   a suite's trend charts (uPlot, inlined) and its runs
//   DIR/runs/<id>/report.html|md   each run's reports, linked to its baseline's and previous
//                                  run's pages in the site, and each failing test to its page
//   DIR/tests/<slug>/<hash>.html   a test's page: failed / flaky / ok run by run, failing since,
//                                  flaky rate, durations, its failures' messages (site_tests.cpp)
//   DIR/search.html                every test with a page, searched by words
//   DIR/gaps.html                  the API gap log, each entry's first-seen / last-seen / fixed
//   DIR/files/…                    with SiteOptions::copy_files: the logs and sources the pages
//                                  link to, so that the folder can be published as it is
//   DIR/site.json                  what was built, so that the next build rewrites only what
//                                  changed (SiteManifest)
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "runner/results/gap_log.h"
#include "runner/results/store.h"

namespace devshim {

/// A test as the database names it (StoredCase: its file, class name and name).
struct SiteTestRef {
  std::string file, classname, name;
  bool operator==(const SiteTestRef&) const = default;
  bool operator<(const SiteTestRef& o) const {
    return std::tie(file, classname, name) < std::tie(o.file, o.classname, o.name);
  }
};

/// What the site keeps of a run's report (site.json) for the pages that look across runs, so
/// that a run whose pages are current is not read again.
struct SiteRunDigest {
  /// Its tests that failed ('f'), errored ('e') or passed on a rerun ('k', flaky), each with its
  /// duration and its failure ("Exception: message", at most 300 bytes).
  struct Failing {
    SiteTestRef ref;
    char kind = 'f';
    double duration_s = 0;
    std::string message;
  };
  std::vector<Failing> failing;
  struct Cluster {
    std::string signature, exception, message;
    int tests = 0;
  };
  std::vector<Cluster> clusters;                           ///< as the report's, biggest first
  std::vector<std::pair<std::string, double>> slow_files;  ///< at most 10, slowest first
};

/// What a page of the site shows of one run: a row of the runs table and a point of each chart.
struct SiteRun {
  RunRecord run;
  RunVersions versions;
  std::string policy;     ///< comparable_policy; empty for a baseline run
  std::string suite_dir;  ///< the suite's folder name under suites/ (site_slugs)
  /// run_summary of its report (reports/report.h): counts, pass rate, duration, comparisons.
  nlohmann::json summary;
  SiteRunDigest digest;
};

/// A test whose page the site has: it failed, errored or was flaky in a run of the site, or is
/// among the slowest of its suite's newest run.
struct SiteTest {
  std::string suite, suite_dir;
  SiteTestRef ref;
  /// The runs of the site it failed, errored or was flaky in (the runs' digests), newest first;
  /// in the suite's other runs it did not fail (passed, skipped or was absent).
  std::vector<TestHistoryEntry> history;
};

/// How the site names a test on its pages: as the reports of run do (test_label).
std::string site_test_label(const RunRecord& run, const SiteTestRef& test);
/// site_test_label with the test's newest run in its history.
std::string site_test_label(const SiteTest& test);
/// The path of a test's page from the site's root: tests/<suite_dir>/<16 hex digits>.html, the
/// digits a hash (FNV-1a) of the file, class and name, the same on every build.
std::string site_test_page(const std::string& suite_dir, const SiteTestRef& test);
/// The link to a commit upstream made from a suite's source_url template when it has a known
/// form (".../blob/{commit}/…" of GitHub, Gitea and Forgejo, ".../-/blob/{commit}/…" of GitLab):
/// ".../commit/<commit>"; empty otherwise, or when commit is empty.
std::string commit_url(const std::string& source_url, const std::string& commit);

/// Folder names for suites under suites/: letters, digits, '.', '-' and '_' kept, anything else
/// '_'; "suite" for a name left empty or dots only; "-2", "-3", … where two names would meet.
/// In the order of names given, each once.
std::map<std::string, std::string> site_slugs(const std::vector<std::string>& suites);

/// The pages (reports/site_pages.cpp). Runs are newest first; links are relative to the page.
std::string render_site_index(const std::vector<SiteRun>& runs, const std::string& db_name);
/// slowest: the slowest tests of the suite's newest run, slowest first, each with its duration
/// and its page (site_test_page).
struct SiteSlowTest {
  SiteTestRef ref;
  double duration_s = 0;
  std::string page;
};
std::string render_site_suite(const std::string& suite, const std::vector<SiteRun>& runs,
                              const std::vector<SiteSlowTest>& slowest);
/// A test's page (site_tests.cpp); runs: its suite's runs in the site, newest first.
std::string render_site_test(const SiteTest& test, const std::vector<SiteRun>& runs);
/// search.html: every test with a page, with its suite and its outcome in the suite's newest run
/// (newest_runs: by suite), for the search box.
std::string render_site_search(const std::vector<SiteTest>& tests,
                               const std::map<std::string, std::int64_t>& newest_runs);
std::string render_site_gaps(const std::vector<GapEntry>& gaps,
                             const std::map<std::int64_t, std::string>& run_pages);

struct SiteOptions {
  std::filesystem::path dir;
  std::string suite;  ///< only this suite's runs; empty: every suite
  bool full = false;  ///< render every run's pages again, whatever site.json says
  /// Copy the logs and sources the run pages link to outside DIR into DIR/files/ and link the
  /// copies, so that DIR works moved or published (site_files.h).
  bool copy_files = false;
};

struct SiteResult {
  int runs = 0;            ///< runs in the site
  int pages_rendered = 0;  ///< runs whose report pages were rendered by this build
  int pages_removed = 0;   ///< runs no longer in the database (or the suite) whose pages went
  int files_written = 0;   ///< files whose content changed (index pages included)
  int test_pages = 0;      ///< tests with a page
  int files_copied = 0;    ///< logs and sources copied into the site (copy_files)
};

/// Builds or updates the site in options.dir from store: a run's report pages are rendered when
/// site.json does not hold the same fingerprint for it (its status, end, summary, baseline and
/// previous run, and the devshim version), on one thread per core (each but the caller's with its
/// own connection to store's database), and a file is written only when its content changed.
/// Test pages are rendered on every build (written when changed) from the runs' digests, with
/// no read of the database per test. Runs still running are left out. Throws UsageError for a
/// --suite with no run, RuntimeError when the folder cannot be written.
SiteResult build_site(Store& store, const SiteOptions& options);

}  // namespace devshim
