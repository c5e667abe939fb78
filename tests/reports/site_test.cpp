// `runner site` (reports/site.h) on real stores of recorded nights: the pages and their links,
// incremental rebuilds, pruned runs leaving, folder names of suites, escaping, test pages,
// search, navigation, clusters across runs, commit links, copying linked files into the site.
#include "reports/site.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "base/error.h"
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
  // The relative links of a page that lead to no file under root (fragments dropped).
  static std::vector<std::string> dead_links(const fs::path& root, const std::string& page) {
    const std::string text = read_file(root / page);
    std::vector<std::string> dead;
    const std::regex href("href=\"([^\"#]*)[^\"]*\"");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), href);
         it != std::sregex_iterator(); ++it) {
      const std::string link = (*it)[1];
      if (link.empty() || link.starts_with("http")) continue;
      const fs::path target = ((root / page).parent_path() / link).lexically_normal();
      const fs::path rel = target.lexically_relative(root);
      if (rel.empty() || *rel.begin() == ".." || !fs::exists(target)) dead.push_back(link);
    }
    return dead;
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
  EXPECT_EQ(next.files_written, 4 * 2 + 3 + next.test_pages + 1)
      << "their report.html and .md; both indexes; site.json; each test page (a run more in its "
         "strips) and search.html";
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

TEST_F(Site, EachFailingOrFlakyTestHasAPageReachedFromReportsAndSearch) {
  {
    Store store(db());
    for (int night = 0; night < 4; ++night) {
      const auto baseline = record_night(store, {.mode = "baseline", .night = night, .failing = 3});
      record_night(store, {.night = night, .baseline_run = baseline, .flaky = true});
    }
  }
  const SiteResult r = build();
  // Failing: tests 0..3 of file 0 in some run (baseline 3 or 4, shim 1 or 2); flaky: test 0 of
  // the last file on night 1; and the slowest of the newest run.
  EXPECT_GE(r.test_pages, 5);
  const std::string first =
      site_test_page("sample", {"test_0000.py", "tests.test_0000.T", "test_000"});
  ASSERT_TRUE(fs::is_regular_file(site() / first)) << first;
  const std::string page = read_file(site() / first);
  EXPECT_NE(page.find("<h1 class=\"test-name\">tests.test_0000.T.test_000</h1>"),
            std::string::npos);
  EXPECT_NE(page.find("<a href=\"../../runs/2/report.html\">run 2</a> (2026-01-01)"),
            std::string::npos)
      << "failing in every shim run: failing since the first";
  EXPECT_EQ(count(page, "class=\"cell s-failed\""), 8U) << "4 shim and 4 baseline runs, failed";
  EXPECT_NE(page.find("tensor 0 differs on night 3"), std::string::npos) << "its messages";

  const std::string flaky =
      site_test_page("sample", {"test_0004.py", "tests.test_0004.T", "test_000"});
  const std::string flaky_page = read_file(site() / flaky);
  EXPECT_NE(flaky_page.find("<td>1 of 4 (25.0%)</td>"), std::string::npos) << "flaky once in 4";
  EXPECT_EQ(count(flaky_page, "class=\"cell s-flaky\""), 1U);

  // Run 4's report links its failing tests' pages; search.html lists every page.
  const std::string report = read_file(site() / "runs/4/report.html");
  EXPECT_NE(report.find("<a href=\"../../" + first + "\">history</a>"), std::string::npos);
  const std::string search = read_file(site() / "search.html");
  EXPECT_NE(search.find("\"href\":\"" + first + "\""), std::string::npos);
  EXPECT_NE(search.find("\"tags\":\"flaky \""), std::string::npos);

  // The suite page: failure clusters followed across runs, the slowest tests and files.
  const std::string suite = read_file(site() / "suites/sample/index.html");
  EXPECT_NE(suite.find("id=\"clusters-table\""), std::string::npos);
  EXPECT_NE(suite.find("<code>AssertionError: tensor &lt;n&gt; differs on night &lt;n&gt;</code>"),
            std::string::npos)
      << suite.substr(suite.find("clusters-table"), 600);
  EXPECT_NE(suite.find("id=\"slowest-tests\""), std::string::npos);
  EXPECT_NE(suite.find("<td class=\"path\">test_0004.py</td><td class=\"num\">0.90</td>"),
            std::string::npos)
      << "the slowest file first";
  // Every page has the site's navigation; the links between the site's pages all lead to a page
  // (the report's links to sources and logs lead out: CopyFilesMakesTheSiteWork…).
  for (const std::string& p :
       {std::string("index.html"), std::string("gaps.html"), std::string("search.html"),
        std::string("suites/sample/index.html"), first, std::string("runs/4/report.html")}) {
    EXPECT_NE(read_file(site() / p).find("class=\"toc site-nav\""), std::string::npos) << p;
    if (!p.starts_with("runs/")) {
      EXPECT_EQ(dead_links(site(), p), std::vector<std::string>{}) << p;
    }
  }

  // Pruned runs take their tests' pages with them when no run left names the test.
  {
    Store store(db());
    store.delete_runs({4});  // the only run with the flaky test
  }
  build();
  EXPECT_FALSE(fs::exists(site() / flaky));
  EXPECT_TRUE(fs::exists(site() / first));
}

TEST_F(Site, CopyFilesMakesTheSiteWorkMovedWithItsLogsAndSources) {
  const fs::path project = dir_ / "project";
  fs::create_directories(project / "tests");
  for (int f = 0; f < 5; ++f) {
    testing::write_file(project / "tests" / fmt::format("test_{:04}.py", f), "import unittest\n");
  }
  {
    Store store(db());
    for (int night = 0; night < 2; ++night) {
      record_night(
          store,
          {.night = night, .project_root = project.string(), .out_root = (dir_ / "out").string()});
    }
  }
  const std::string report = "runs/2/report.html";
  build();
  EXPECT_NE(dead_links(site(), report), std::vector<std::string>{})
      << "without --copy-files the logs and sources stay outside";
  Store store(db(), Store::Purpose::kRead);
  const SiteResult r =
      build_site(store, {.dir = site(), .suite = "", .full = false, .copy_files = true});
  EXPECT_EQ(r.pages_rendered, 2) << "copying changes the links: every run again";
  EXPECT_GT(r.files_copied, 0);
  const fs::path moved = dir_ / "published";
  fs::rename(site(), moved);
  EXPECT_EQ(dead_links(moved, report), std::vector<std::string>{});
  EXPECT_NE(read_file(moved / "runs/2/report.md").find("](../../files/"), std::string::npos);
  const std::string html = read_file(moved / report);
  EXPECT_NE(html.find(">log</a>"), std::string::npos);
}

TEST(SiteCommitUrl, FromTheSourceUrlsOfKnownForges) {
  EXPECT_EQ(commit_url("https://github.com/o/r/blob/{commit}/{path}#L{line}", "abc"),
            "https://github.com/o/r/commit/abc");
  EXPECT_EQ(commit_url("https://gitlab.com/o/r/-/blob/{commit}/{path}#L{line}", "abc"),
            "https://gitlab.com/o/r/-/commit/abc");
  EXPECT_EQ(commit_url("https://codeberg.org/o/r/src/commit/{commit}/{path}", "abc"),
            "https://codeberg.org/o/r/commit/abc");
  EXPECT_EQ(commit_url("https://example.com/{path}?rev={commit}", "abc"), "");
  EXPECT_EQ(commit_url("https://github.com/o/r/blob/{commit}/{path}", ""), "");
}

TEST_F(Site, TheRunsTableLinksEachCommitUpstream) {
  {
    Store store(db());
    record_night(store, {.night = 0, .source_url = "https://github.com/o/r/blob/{commit}/{path}"});
  }
  build();
  EXPECT_NE(read_file(site() / "index.html")
                .find("<a class=\"commit\" href=\"https://github.com/o/r/commit/"
                      "c0ffee0000000000000000000000000000000000\"><code>c0ffee0000</code></a>"),
            std::string::npos);
}

}  // namespace
}  // namespace devshim
