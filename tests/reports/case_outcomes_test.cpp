// build_report's two readings of a run (ReportCases): reading in full only the cases report.md
// and report.html show renders exactly what reading every case renders, and counts every test.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reports/html.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "runner/results/differential.h"
#include "tests/reports/report_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;

std::size_t cases_read(const Report& r) {
  std::size_t n = 0;
  for (const auto& f : r.files) n += f.cases.size();
  return n;
}

// Both readings of run_id render the same report.md, report.html and runs.summary; returns how
// many cases each read in full.
std::pair<std::size_t, std::size_t> expect_same_pages(Store& store, std::int64_t run_id,
                                                      const fs::path& out) {
  const Report all = build_report(store, run_id, out, 0, ReportCases::kAll);
  const Report shown = build_report(store, run_id, out, 0, ReportCases::kShown);
  EXPECT_EQ(render_markdown(shown), render_markdown(all));
  EXPECT_EQ(render_html(shown), render_html(all));
  EXPECT_EQ(run_summary(shown), run_summary(all));
  return {cases_read(all), cases_read(shown)};
}

TEST(ReportCases, ShownRendersTheSamePagesAsAllOnTheSampleRun) {
  testing::RecordedRun run;
  testing::record_sample_run(run);
  Store store(run.db());
  const auto [all, shown] = expect_same_pages(store, run.run_id, run.out());
  EXPECT_EQ(all, store.cases(run.run_id).size());
  EXPECT_LT(shown, all) << "the sample run's passing tests are not read in full";
}

// A shim run with a baseline and a previous run, every differential and run-to-run class in it,
// a file that failed without a test and a file only this run has.
class ThreeRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.emplace(dir_ / "results.db");
    using S = CaseStatus;
    // name: {baseline, previous, now}: passed, failed, error, skipped (CUDA), skipped (wants a
    // CPU), Xfailed; 'x': absent.
    const std::vector<std::pair<std::string, std::string>> tests{
        {"test_same", "ppp"},      {"test_regression", "ppf"}, {"test_unlocked", "sfp"},
        {"test_fixed", "pfp"},     {"test_no_gpu", "pps"},     {"test_both", "fff"},
        {"test_skipped", "sss"},   {"test_new", "xxp"},        {"test_new_failing", "xxe"},
        {"test_xfail", "ppX"},     {"test_gone", "ppx"},       {"test_broke_before", "pff"},
        {"test_newly_skip", "ppk"}};
    auto status = [](char c) {
      switch (c) {
        case 'p':
          return S::kPassed;
        case 'f':
          return S::kFailed;
        case 'e':
          return S::kError;
        case 's':
        case 'k':
          return S::kSkipped;
        case 'X':
          return S::kXfailed;
        default:
          return S::kPassed;
      }
    };
    std::int64_t ids[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k) {
      RunRecord run;
      run.suite = "s";
      run.framework = "pytest";
      run.mode = k == 0 ? "baseline" : "shim";
      run.started_at = fmt::format("2026-11-2{}T10:00:00Z", k);
      run.project_root = (dir_ / "project").string();
      run.tests_dir = "tests";
      run.out_dir = (dir_ / fmt::format("out{}", k)).string();
      run.baseline_run = k == 2 ? ids[0] : 0;
      ids[k] = store_->begin_run(run, {"test_a.py", "test_b.py", "test_crash.py"});
      for (const char* file : {"test_a.py", "test_b.py"}) {
        std::vector<TestCase> cases;
        for (const auto& [name, statuses] : tests) {
          if (statuses[k] == 'x') continue;
          TestCase c;
          c.classname = fmt::format("tests.{}.T", file);
          c.name = name;
          c.status = status(statuses[k]);
          c.source = {fmt::format("tests/{}", file), static_cast<int>(c.name.size())};
          if (is_failure(c.status)) {
            c.exception = "AssertionError";
            c.message = "boom in " + name;
          } else if (statuses[k] == 's') {
            c.message = "CUDA not available";
          } else if (statuses[k] == 'k') {
            c.message = "test requires only a CPU";
          }
          cases.push_back(c);
        }
        FileRecord f;
        f.path = file;
        f.status = FileStatus::kFailed;
        store_->record_file(ids[k], f, cases);
      }
      FileRecord crash;
      crash.path = "test_crash.py";
      crash.status = k == 1 ? FileStatus::kPassed : FileStatus::kCrashed;
      crash.note = "killed by signal 11";
      store_->record_file(ids[k], crash, {});
      if (k == 2) {  // a file the earlier runs never had
        FileRecord only;
        only.path = "test_only_now.py";
        only.status = FileStatus::kPassed;
        TestCase c;
        c.classname = "tests.test_only_now.T";
        c.name = "test_new_file";
        store_->record_file(ids[k], only, {c});
      }
      store_->finish_run(ids[k], "failed", fmt::format("2026-11-2{}T10:05:00Z", k));
    }
    store_->set_previous_run(ids[2], ids[1]);
    run_ = ids[2];
  }

  testing::TempDir dir_;
  std::optional<Store> store_;
  std::int64_t run_ = 0;
};

TEST_F(ThreeRuns, ShownRendersTheSamePagesAsAllWithEveryClass) {
  const Report all = build_report(*store_, run_, dir_ / "out2");
  ASSERT_TRUE(all.differential);
  ASSERT_TRUE(all.previous);
  for (const char* cls :
       {"compatible", "regression", "unlocked", "newly_skipped", "broken_both", "skipped_both"}) {
    EXPECT_GT(all.differential->counts.count(cls), 0U) << cls << " is in the run";
  }
  for (const char* cls : {"new_failure", "fixed", "still_failing", "unchanged"}) {
    EXPECT_GT(all.previous->counts.at(cls), 0) << cls << " is in the run";
  }
  EXPECT_EQ(all.differential->masquerade_skips, 2);

  const auto [every, shown] = expect_same_pages(*store_, run_, dir_ / "out2");
  EXPECT_LT(shown, every) << "compatible and skipped tests are not read in full";
}

TEST_F(ThreeRuns, ResultStatusesReadWhatCasesRead) {
  for (std::int64_t run = 1; run <= run_; ++run) {
    const std::vector<StoredCase> cases = store_->cases(run);
    const RunResultStatuses expected = statuses_of(cases);
    const RunResultStatuses got = store_->result_statuses(run);
    EXPECT_EQ(got.files, expected.files);
    ASSERT_EQ(got.rows.size(), expected.rows.size());
    for (std::size_t k = 0; k < got.rows.size(); ++k) {
      const auto& g = got.rows[k];
      const auto& e = expected.rows[k];
      EXPECT_EQ(std::tie(g.result_id, g.test_id, g.file, g.status, g.flaky, g.culprit, g.signature),
                std::tie(e.result_id, e.test_id, e.file, e.status, e.flaky, e.culprit, e.signature))
          << "row " << k << " of run " << run;
    }
    std::vector<std::int64_t> ids;
    for (auto it = got.rows.rbegin(); it != got.rows.rend(); ++it) ids.push_back(it->result_id);
    ids.insert(ids.begin() + 1, 999999);  // no such result
    const std::vector<StoredCase> by_id = store_->cases_by_id(ids);
    ASSERT_EQ(by_id.size(), cases.size());
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const StoredCase& c = by_id[cases.size() - 1 - k];
      EXPECT_EQ(c.result_id, cases[k].result_id);
      EXPECT_EQ(c.test.name, cases[k].test.name);
      EXPECT_EQ(c.test.message, cases[k].test.message);
      EXPECT_EQ(c.file, cases[k].file);
    }
  }
}

// Two runs recording at once: each run's results are no longer one range of ids. Another run's
// few results inside the range are skipped; many of them make the read go through the index.
TEST(ResultStatuses, RunsRecordedAtOnceReadTheirOwnResultsInCasesOrder) {
  for (const int others : {1, 40}) {
    testing::TempDir dir;
    Store store(dir / "results.db");
    auto begin = [&](const char* suite) {
      RunRecord run;
      run.suite = suite;
      run.framework = "pytest";
      run.mode = "shim";
      run.started_at = "2026-11-24T10:00:00Z";
      run.project_root = dir.path().string();
      run.tests_dir = "tests";
      run.out_dir = (dir / suite).string();
      return store.begin_run(run, {});
    };
    const std::int64_t a = begin("a");
    const std::int64_t b = begin("b");
    auto record = [&](std::int64_t run, const char* path, int tests, CaseStatus status) {
      std::vector<TestCase> cases;
      for (int i = 0; i < tests; ++i) {
        TestCase c;
        c.classname = "T";
        c.name = fmt::format("test_{}", i);
        c.status = status;
        if (is_failure(status)) c.message = "boom";
        cases.push_back(c);
      }
      FileRecord f;
      f.path = path;
      f.status = FileStatus::kPassed;
      store.record_file(run, f, cases);
    };
    record(a, "test_z.py", 5, CaseStatus::kFailed);  // sorts last, recorded first
    record(b, "test_b.py", others, CaseStatus::kPassed);
    record(a, "test_a.py", 5, CaseStatus::kSkipped);
    record(b, "test_c.py", 3, CaseStatus::kPassed);
    for (const std::int64_t run : {a, b}) {
      const RunResultStatuses expected = statuses_of(store.cases(run));
      const RunResultStatuses got = store.result_statuses(run);
      EXPECT_EQ(got.files, expected.files) << others << " results of the other run";
      ASSERT_EQ(got.rows.size(), expected.rows.size()) << others << " results of the other run";
      for (std::size_t k = 0; k < got.rows.size(); ++k) {
        EXPECT_EQ(got.rows[k].result_id, expected.rows[k].result_id);
        EXPECT_EQ(got.rows[k].file, expected.rows[k].file);
        EXPECT_EQ(got.rows[k].status, expected.rows[k].status);
      }
    }
  }
}

}  // namespace
}  // namespace devshim
