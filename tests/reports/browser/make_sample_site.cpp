// make_sample_site DIR: records 12 nights of suite "sample" (a baseline run, then a shim run
// that names it; the shim runs with a flaky test on nights 1, 4, 7 and 10), 3 nights of suite
// "other" and one of suite "single" into DIR/results.db, with logs under DIR/out and a
// source_url, builds the site into DIR/site (reports/site.h) with the linked logs and sources
// copied in (SiteOptions::copy_files), and writes the test files the reports link to under
// DIR/project. The input of check_site_in_chromium.mjs.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "reports/site.h"
#include "tests/reports/site_fixture.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_sample_site DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  try {
    const fs::path dir = fs::absolute(argv[1]);
    fs::create_directories(dir / "project/tests");
    for (int f = 0; f < 5; ++f) {
      std::ofstream(dir / "project/tests" / ("test_000" + std::to_string(f) + ".py"))
          << "import unittest\n";
    }
    const std::string project = (dir / "project").string();
    const std::string out = (dir / "out").string();
    const std::string url = "https://github.com/example/project/blob/{commit}/{path}#L{line}";
    {
      devshim::Store store(dir / "results.db");
      for (int night = 0; night < 12; ++night) {
        const auto baseline = devshim::testing::record_night(store, {.mode = "baseline",
                                                                     .night = night,
                                                                     .failing = 3 + night % 3,
                                                                     .project_root = project,
                                                                     .source_url = url,
                                                                     .out_root = out});
        devshim::testing::record_night(store, {.night = night,
                                               .baseline_run = baseline,
                                               .project_root = project,
                                               .source_url = url,
                                               .out_root = out,
                                               .flaky = true});
      }
      for (int night = 0; night < 3; ++night) {
        devshim::testing::record_night(store, {.suite = "other",
                                               .night = night,
                                               .project_root = project,
                                               .out_root = out + "/other"});
      }
      devshim::testing::record_night(
          store,
          {.suite = "single", .night = 5, .project_root = project, .out_root = out + "/single"});
    }
    devshim::Store store(dir / "results.db", devshim::Store::Purpose::kRead);
    const auto r = devshim::build_site(
        store, {.dir = dir / "site", .suite = "", .full = false, .copy_files = true});
    std::printf("%s: %d runs, %d test pages, %d files copied\n", (dir / "site").c_str(), r.runs,
                r.test_pages, r.files_copied);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_sample_site: %s\n", e.what());
    return 1;
  }
}
