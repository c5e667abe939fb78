// `runner site` (reports/site.h) on real stores of recorded nights: the pages and their links,
// incremental rebuilds, pruned runs leaving, folder names of suites, escaping.
#include "reports/site.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runner/base/error.h"
#include "tests/reports/site_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::record_night;
using testing::TempDir;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class Site : public ::testing::Test {
 protected:
  // Nights 0..n-1 of "sample": a baseline run, then a shim run that names it.
  void record_nights(int from, int to) {
    Store store(db());
    for (int night = from; night < to; ++night) {
      const auto baseline = record_night(store, {.mode = "baseline", .night = night, .failing = 3});
      record_night(store, {.night = night, .baseline_run = baseline});
    }
  }
  SiteResult build(bool full = false) {
    Store store(db(), Store::Purpose::kRead);
    return build_site(store, {.dir = site(), .suite = "", .full = full});
  }
  fs::path db() const { return dir_ / "results.db"; }
  fs::path site() const { return dir_ / "site"; }
  TempDir dir_;
};

TEST_F(Site, EveryRunGetsItsReportsLinkedToItsBaselineAndPreviousRun) {
  record_nights(0, 3);  // runs 1..6: odd baseline, even shim
  const SiteResult r = build();
  EXPECT_EQ(r.runs, 6);
  EXPECT_EQ(r.pages_rendered, 6);
  for (const char* page : {"index.html", "gaps.html", "site.json", "suites/sample/index.html"}) {
    EXPECT_TRUE(fs::is_regular_file(site() / page)) << page;
  }
  // Run 4 (shim, night 1): baseline run 3, previous run 2, both linked inside the site.
  const std::string html = read_file(site() / "runs/4/report.html");
  EXPECT_NE(html.find("href=\"../3/report.html\""), std::string::npos);
  EXPECT_NE(html.find("href=\"../2/report.html\""), std::string::npos);
  EXPECT_NE(read_file(site() / "runs/4/report.md").find("(../2/report.md)"), std::string::npos);
  // ... and forward: run 6 is compared with run 4; run 3 is run 4's baseline and run 5's previous.
  EXPECT_NE(html.find("<a href=\"../6/report.html\">run 6</a> (compared with this run)"),
            std::string::npos);
  const std::string baseline = read_file(site() / "runs/3/report.html");
  EXPECT_NE(baseline.find("<a href=\"../4/report.html\">run 4</a> (shim run with this baseline) "
                          "· <a href=\"../5/report.html\">run 5</a> (compared with this run)"),
            std::string::npos);
  EXPECT_EQ(read_file(site() / "runs/6/report.html").find("Later runs"), std::string::npos);

  const std::string index = read_file(site() / "index.html");
  EXPECT_EQ(count(index, "<tr data-run="), 6U);
  EXPECT_NE(index.find("href=\"runs/6/report.html\""), std::string::npos);
  EXPECT_NE(index.find("href=\"suites/sample/index.html\""), std::string::npos);
  const std::string suite = read_file(site() / "suites/sample/index.html");
  EXPECT_NE(suite.find("\"href\":\"../../runs/6/report.html\""), std::string::npos);
  EXPECT_NE(suite.find("\"label\":\"shim · policy default\""), std::string::npos);
  EXPECT_EQ(count(suite, "<script"), 3U) << "the data, uPlot, the page's script; nothing loaded";
  EXPECT_EQ(suite.find(" src="), std::string::npos);

  // The summary a report would store is what the index shows: night 2's shim run.
  const auto manifest = nlohmann::json::parse(read_file(site() / "site.json"));
  EXPECT_EQ(manifest["runs"]["6"]["summary"]["tests"], 20);
  EXPECT_EQ(manifest["runs"]["6"]["summary"]["previous_run"], 4);
  EXPECT_EQ(manifest["runs"]["6"]["summary"]["baseline_run"], 5);
}

TEST_F(Site, ARebuildRewritesOnlyWhatChanged) {
  record_nights(0, 3);
  build();
  const SiteResult same = build();
  EXPECT_EQ(same.pages_rendered, 0);
  EXPECT_EQ(same.files_written, 0) << "nothing changed, nothing written";

  const auto untouched = fs::last_write_time(site() / "runs/2/report.html");
  record_nights(3, 4);  // one more night: runs 7 and 8
  const SiteResult next = build();
  EXPECT_EQ(next.runs, 8);
  EXPECT_EQ(next.pages_rendered, 4) << "the new night's two runs, and the two they link back to";
  EXPECT_EQ(next.files_written, 4 * 2 + 3) << "their report.html and .md; both indexes; site.json";
  EXPECT_NE(read_file(site() / "runs/6/report.html").find("href=\"../8/report.html\""),
            std::string::npos);
  EXPECT_EQ(fs::last_write_time(site() / "runs/2/report.html"), untouched);
  EXPECT_NE(read_file(site() / "runs/8/report.html").find("href=\"../6/report.html\""),
            std::string::npos);

  EXPECT_EQ(build(/*full=*/true).pages_rendered, 8);

  {
    Store store(db());
    store.delete_runs({1, 2});  // pruned
  }
  const SiteResult pruned = build();
  EXPECT_EQ(pruned.pages_removed, 2);
  EXPECT_FALSE(fs::exists(site() / "runs/1"));
  EXPECT_TRUE(fs::exists(site() / "runs/3/report.html"));
}

TEST_F(Site, ASuiteNameBecomesASafeFolderAndEscapedText) {
  EXPECT_EQ(site_slugs({"cuda-idioms"}).at("cuda-idioms"), "cuda-idioms");
  const auto slugs = site_slugs({"a/b c", "a_b_c", "..", "<x>"});
  EXPECT_EQ(slugs.at("a/b c"), "a_b_c");
  EXPECT_EQ(slugs.at("a_b_c"), "a_b_c-2");
  EXPECT_EQ(slugs.at(".."), "suite");
  EXPECT_EQ(slugs.at("<x>"), "_x_");

  {
    Store store(db());
    record_night(store, {.suite = "</script><b>x", .night = 0});
  }
  build();
  const std::string suite = read_file(site() / "suites/__script__b_x/index.html");
  EXPECT_EQ(suite.find("</script><b>"), std::string::npos);
  EXPECT_NE(suite.find("&lt;/script&gt;&lt;b&gt;x"), std::string::npos);

  Store store(db(), Store::Purpose::kRead);
  EXPECT_THROW(build_site(store, {.dir = site(), .suite = "nope", .full = false}), UsageError);
}

}  // namespace
}  // namespace devshim
