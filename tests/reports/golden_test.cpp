// Golden files for every report format, for `runner compare -o`'s renderings of the recorded run
// against its previous run, rendered from a recorded run (report_fixture.cpp), and for the
// site's index, suite and gap pages of three recorded nights (site_fixture.cpp); the temporary
// folder is normalised to <TMP>, and the site's embedded assets (uPlot, site.js, site.css: the
// browser test checks them) to placeholders. tests/reports/approve.sh re-approves.
#include <gtest/gtest.h>

#include "reports/comparison_report.h"
#include "reports/html.h"
#include "reports/json_report.h"
#include "reports/junit_xml.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "reports/site.h"
#include "reports/site_assets.h"
#include "tests/reports/report_fixture.h"
#include "tests/reports/site_fixture.h"

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

// The site's pages with each embedded asset replaced by a placeholder naming it.
std::string without_assets(std::string page) {
  for (const auto& [asset, name] : {std::pair{assets::uplot_js, "<uPlot script>"},
                                    {assets::uplot_css, "<uPlot style>"},
                                    {assets::uplot_license, "<uPlot licence>"},
                                    {assets::site_js, "<site.js>"},
                                    {assets::site_css, "<site.css>"}}) {
    for (auto at = page.find(asset); at != std::string::npos; at = page.find(asset, at)) {
      page.replace(at, asset.size(), name);
    }
  }
  return page;
}

TEST(GoldenSite, IndexSuiteAndGapPages) {
  testing::TempDir dir;
  {
    Store store(dir / "results.db");
    for (int night = 0; night < 3; ++night) {
      const auto baseline = testing::record_night(
          store, {.mode = "baseline", .night = night, .failing = 3, .project_root = "/project"});
      testing::record_night(store, {.night = night, .baseline_run = baseline});
    }
  }
  Store store(dir / "results.db", Store::Purpose::kRead);
  build_site(store, {.dir = dir / "site", .suite = "", .full = false});
  for (const auto& [page, golden] : {std::pair{"index.html", "site-index.html.approved"},
                                     {"suites/sample/index.html", "site-suite.html.approved"},
                                     {"gaps.html", "site-gaps.html.approved"}}) {
    std::string text = without_assets(testing::read_file(dir / "site" / page));
    const std::string tmp = dir.path().string();
    for (auto at = text.find(tmp); at != std::string::npos; at = text.find(tmp, at)) {
      text.replace(at, tmp.size(), "<TMP>");
    }
    testing::expect_golden(golden, text);
  }
}

}  // namespace
}  // namespace devshim
