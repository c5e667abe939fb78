// make_sample_site DIR: records 12 nights of suite "sample" (a baseline run, then a shim run
// that names it) and 3 nights of suite "other" into DIR/results.db, builds the site into
// DIR/site (reports/site.h), and writes the test files the reports link to under DIR/project.
// The input of check_site_in_chromium.mjs.
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
    {
      devshim::Store store(dir / "results.db");
      for (int night = 0; night < 12; ++night) {
        const auto baseline = devshim::testing::record_night(store, {.mode = "baseline",
                                                                     .night = night,
                                                                     .failing = 3 + night % 3,
                                                                     .project_root = project});
        devshim::testing::record_night(
            store, {.night = night, .baseline_run = baseline, .project_root = project});
      }
      for (int night = 0; night < 3; ++night) {
        devshim::testing::record_night(store,
                                       {.suite = "other", .night = night, .project_root = project});
      }
    }
    devshim::Store store(dir / "results.db", devshim::Store::Purpose::kRead);
    const auto r = devshim::build_site(store, {.dir = dir / "site", .suite = "", .full = false});
    std::printf("%s: %d runs\n", (dir / "site").c_str(), r.runs);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_sample_site: %s\n", e.what());
    return 1;
  }
}
