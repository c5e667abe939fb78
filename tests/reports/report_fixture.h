// A small recorded run for the report tests (and those of the commands that render reports): a
// real SQLite store and a real project folder with the test files the cases point at; every value
// fixed so rendered output is stable. And the runs the comparison tests compare.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim::testing {

struct RecordedRun {
  TempDir dir;  ///< project/, out/, results.db
  std::int64_t run_id = 0;
  std::filesystem::path project() const { return dir / "project"; }
  std::filesystem::path out() const { return dir / "out"; }
  std::filesystem::path db() const { return dir / "results.db"; }
};

/// Records a run (after its previous run, the night before: new failures, a fix, still failing
/// tests) with a flaky test, passing, failing (30 sharing one signature), erroring, crashed
/// (culprit), skipped and import-error files, hostile test names and a 10 KB message.
void record_sample_run(RecordedRun& r);

/// One run of suite "s" whose tests (in test_a.py, from line 10) have the statuses given, in a
/// shim run with `policy`; the failing ones raised RuntimeError "<name> broke". For the
/// comparison tests.
std::int64_t record_compared_run(Store& store, const std::string& policy,
                                 const std::vector<std::pair<std::string, CaseStatus>>& tests);

/// text with the run's temporary folder replaced by <TMP>, for golden comparisons.
std::string normalise(std::string text, const RecordedRun& r);

/// Compares text with golden/<name>; with DEVSHIM_APPROVE=1 in the environment, writes it.
void expect_golden(const std::string& name, const std::string& text);

}  // namespace devshim::testing
