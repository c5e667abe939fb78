// report.html: hostile text stays text, links are only the model's, nothing is loaded from
// elsewhere. (tests/reports/browser checks the same page in real headless Chromium.)
#include "reports/html.h"

#include <gtest/gtest.h>

#include "tests/reports/report_fixture.h"

namespace devshim {
namespace {

class HtmlTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::record_sample_run(run_); }
  std::string page() {
    Store store(run_.db());
    return render_html(build_report(store, run_.run_id, run_.out()));
  }
  testing::RecordedRun run_;
};

TEST_F(HtmlTest, HostileTestNamesAreEscapedText) {
  const std::string html = page();
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  // Exactly one script element: the page's own.
  std::size_t scripts = 0;
  for (std::size_t p = 0; (p = html.find("<script", p)) != std::string::npos; ++p) ++scripts;
  EXPECT_EQ(scripts, 1U);
}

TEST_F(HtmlTest, SelfContainedWithAllSections) {
  const std::string html = page();
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  for (const char* id : {"id=\"summary\"", "id=\"clusters\"", "id=\"failures\"", "id=\"files\""}) {
    EXPECT_NE(html.find(id), std::string::npos) << id;
  }
  EXPECT_NE(html.find("https://github.com/example/project/blob/"), std::string::npos);
}

TEST_F(HtmlTest, DifferentialSectionLeadsWithRegressionsEscaped) {
  Store store(run_.db());
  Report r = build_report(store, run_.run_id, run_.out());
  r.differential.emplace();
  r.differential->baseline_run = 3;
  r.differential->counts = {{"regression", 1}, {"unlocked", 2}};
  r.differential->regressions.push_back(
      {"test_x.py", "T", "test_<b>", "passed", "failed", "boom <i>", {"../x.py#L3", ""}});
  const std::string html = render_html(r);
  const auto diff = html.find("id=\"differential\"");
  ASSERT_NE(diff, std::string::npos);
  EXPECT_LT(diff, html.find("id=\"summary\""));
  EXPECT_NE(html.find("test_&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("boom <i>"), std::string::npos);
  EXPECT_NE(html.find("href=\"../x.py#L3\""), std::string::npos);
}

TEST(SafeHref, OnlyRelativePathsAnchorsAndHttpUrls) {
  EXPECT_EQ(html::safe_href("javascript:alert(1)"), "");
  EXPECT_EQ(html::safe_href("data:text/html,x"), "");
  EXPECT_NE(html::safe_href("../project/tests/test_x.py#L3"), "");
  EXPECT_NE(html::safe_href("https://example.org/x"), "");
}

}  // namespace
}  // namespace devshim
