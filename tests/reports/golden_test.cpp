// Golden files for every report format, and for `runner compare -o`'s renderings of the
// recorded run against its previous run, rendered from a recorded run (report_fixture.cpp) with
// the temporary folder normalised to <TMP>. tests/reports/approve.sh re-approves.
#include <gtest/gtest.h>

#include "reports/comparison_report.h"
#include "reports/html.h"
#include "reports/json_report.h"
#include "reports/junit_xml.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "tests/reports/report_fixture.h"

namespace devshim {
namespace {

class Golden : public ::testing::Test {
 protected:
  void SetUp() override { testing::record_sample_run(run_); }
  Report report() {
    Store store(run_.db());
    return build_report(store, run_.run_id, run_.out());
  }
  ComparisonReport comparison() {
    Store store(run_.db());
    const RunRecord b = *store.run(run_.run_id);
    return build_comparison_report(store, *store.run(b.previous_run), b, run_.out());
  }
  testing::RecordedRun run_;
};

TEST_F(Golden, Markdown) {
  testing::expect_golden("report.md.approved", testing::normalise(render_markdown(report()), run_));
}

TEST_F(Golden, Json) {
  testing::expect_golden("report.json.approved",
                         testing::normalise(dump_report_json(render_json(report())), run_));
}

TEST_F(Golden, Html) {
  testing::expect_golden("report.html.approved", testing::normalise(render_html(report()), run_));
}

TEST_F(Golden, JunitXml) {
  testing::expect_golden("junit.xml.approved", testing::normalise(render_junit(report()), run_));
}

TEST_F(Golden, CompareMarkdown) {
  testing::expect_golden("compare.md.approved",
                         testing::normalise(render_comparison_markdown(comparison()), run_));
}

TEST_F(Golden, CompareJson) {
  testing::expect_golden("compare.json.approved",
                         testing::normalise(comparison_json(comparison()).dump(1), run_));
}

TEST_F(Golden, CompareHtml) {
  testing::expect_golden("compare.html.approved",
                         testing::normalise(render_comparison_html(comparison()), run_));
}

}  // namespace
}  // namespace devshim
