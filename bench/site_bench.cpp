// `runner site` at a year of nights: RUNS nightly runs of TESTS tests each (default 365 ×
// 25,000), recorded into a real store with the site's test fixture (tests/reports/site_fixture.h).
// Prints, measured in this one run:
//   - the first build (every run's report pages rendered; target at 365 runs: under 5 s), per
//     run, against rendering one run's reports alone (build_report + report.html + report.md,
//     the baseline);
//   - a rebuild with nothing new, and the rebuild after one more night (target: under 5 s),
//     against that baseline;
//   - the size of the index and of the suite page (target: under 2 MB each);
//   - the test pages (a page per test that failed or was flaky in a run, and the slowest), all
//     rendered by each build: how many, and the share of the first build they took.
// --keep leaves the database and the site in the folder it names at the end (to profile
// `runner site` on them).
//
//   site_bench [RUNS] [TESTS] [--keep]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "reports/html.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "reports/site.h"
#include "tests/reports/site_fixture.h"

namespace {

namespace fs = std::filesystem;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <typename F>
double timed(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return seconds_since(start);
}

constexpr int kTestsPerFile = 100;

devshim::testing::Night night_of(int night, int tests) {
  return {.suite = "transformers",
          .night = night,
          .files = tests / kTestsPerFile,
          .tests_per_file = kTestsPerFile,
          .failing = tests / 50,  // 2 % failing, as a young port's nights are
          .project_root = "/project"};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool keep = std::erase(args, "--keep") > 0;
  const int runs = !args.empty() ? std::atoi(args[0].c_str()) : 365;
  const int tests = args.size() > 1 ? std::atoi(args[1].c_str()) : 25000;
  if (runs < 2 || tests < kTestsPerFile || args.size() > 2) {
    std::fprintf(stderr, "usage: site_bench [RUNS >= 2] [TESTS >= %d] [--keep]\n", kTestsPerFile);
    return 2;
  }
  try {
    const fs::path dir =
        fs::temp_directory_path() / ("devshim-site-bench-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path db = dir / "results.db";
    const double record_s = timed([&] {
      devshim::Store store(db);
      for (int n = 0; n < runs; ++n) devshim::testing::record_night(store, night_of(n, tests));
    });
    std::printf("site_bench: %d runs x %d tests recorded in %.1f s (%.0f MB database)\n", runs,
                tests, record_s, static_cast<double>(fs::file_size(db)) / 1e6);

    devshim::Store store(db, devshim::Store::Purpose::kRead);
    // Baseline: one run's reports, as `runner report` renders them.
    const std::int64_t last = store.runs(1).at(0).id;
    const double one_report_s = timed([&] {
      const devshim::Report r = devshim::build_report(store, last, dir / "one");
      if (devshim::render_html(r).empty() || devshim::render_markdown(r).empty()) std::abort();
    });

    const fs::path site = dir / "site";
    devshim::SiteResult first;
    const double first_s = timed(
        [&] { first = devshim::build_site(store, {.dir = site, .suite = "", .full = false}); });
    devshim::SiteResult same;
    const double same_s = timed(
        [&] { same = devshim::build_site(store, {.dir = site, .suite = "", .full = false}); });
    {
      devshim::Store writer(db);
      devshim::testing::record_night(writer, night_of(runs, tests));
    }
    devshim::SiteResult next;
    const double next_s = timed(
        [&] { next = devshim::build_site(store, {.dir = site, .suite = "", .full = false}); });

    const double index_mb = static_cast<double>(fs::file_size(site / "index.html")) / 1e6;
    const double suite_mb =
        static_cast<double>(fs::file_size(site / "suites/transformers/index.html")) / 1e6;
    std::printf("baseline: one run's report.html + report.md: %.3f s\n", one_report_s);
    const char* first_target = runs != 365 ? "at 365 runs" : first_s < 5 ? "met" : "NOT met";
    std::printf(
        "first build: %.1f s, %d runs rendered, %d test pages (%.3f s per run = %.2fx the "
        "baseline; target < 5 s: %s)\n",
        first_s, first.pages_rendered, first.test_pages, first_s / first.pages_rendered,
        first_s / first.pages_rendered / one_report_s, first_target);
    std::printf(
        "rebuild, nothing new: %.3f s, %d rendered, %d test pages, %d files written (%.2fx the "
        "baseline)\n",
        same_s, same.pages_rendered, same.test_pages, same.files_written, same_s / one_report_s);
    std::printf(
        "rebuild after one more night: %.3f s, %d rendered, %d files written (%.2fx the baseline;"
        " target < 5 s: %s)\n",
        next_s, next.pages_rendered, next.files_written, next_s / one_report_s,
        next_s < 5 ? "met" : "NOT met");
    std::printf("index.html %.2f MB, suites/transformers/index.html %.2f MB (target < 2 MB: %s)\n",
                index_mb, suite_mb, index_mb < 2 && suite_mb < 2 ? "met" : "NOT met");
    if (keep) {
      std::printf("kept: %s (results.db, site/)\n", dir.c_str());
    } else {
      fs::remove_all(dir);
    }
    // A new night renders its own pages and the previous night's, whose "Later runs" now name
    // it; nothing else.
    return next.pages_rendered == 2 && same.pages_rendered == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "site_bench: %s\n", e.what());
    return 1;
  }
}
