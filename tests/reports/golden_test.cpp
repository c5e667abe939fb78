// Golden files for every report format, rendered from a recorded run (report_fixture.cpp) with
// the temporary folder normalised to <TMP>. tests/reports/approve.sh re-approves.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace devshim
