// Nights of a suite recorded into a real results store, for the site's tests, its browser check
// (make_sample_site) and its benchmark (bench/site_bench.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "runner/results/store.h"

namespace devshim::testing {

struct Night {
  std::string suite = "sample";
  std::string mode = "shim";  ///< "shim" or "baseline"
  int night = 0;              ///< started at 2026-01-01T01:00:00Z plus this many days
  int files = 5;
  int tests_per_file = 4;
  int failing = 1;  ///< failing tests, from the first; the night's parity moves one of them
  std::int64_t baseline_run = 0;  ///< shim runs: the run of the same night without the shim
  std::string project_root = "/project";
  std::string source_url{};  ///< the suite's source_url template; empty: none
  /// Not empty: the run's out_dir is <out_root>/<night>-<mode>, and each file gets a log there.
  std::string out_root{};
  /// The first test of the last file fails, then passes on a rerun (flaky), on nights 1, 4, 7, …
  bool flaky = false;
};

/// Records one finished run of a night in one transaction (Store::FileWriter), compared with the
/// newest comparable run as the runner does (runs.previous_run). Each file has tests_per_file
/// tests with a source line, `failing` of them failed (test k of a night fails when k < failing,
/// or k == failing on odd nights: so nights differ), one skipped. No summary is stored, as for a
/// run whose report was never written; with Night::flaky, a flaky test on some nights (recorded
/// through Store::record_reruns). Returns the run's id.
std::int64_t record_night(Store& store, const Night& night);

}  // namespace devshim::testing
