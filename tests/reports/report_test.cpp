// The report model and the Markdown, JSON and JUnit renderers on a recorded run.
#include "reports/report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <pugixml.hpp>
#include <string>
#include <vector>

#include "reports/html.h"
#include "reports/json_report.h"
#include "reports/junit_xml.h"
#include "reports/markdown.h"
#include "reports/report_text.h"
#include "reports/write_reports.h"
#include "tests/reports/report_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;

// md without its fenced code blocks (whose content GitHub shows as text, never as markup).
std::string outside_code_blocks(const std::string& md) {
  std::string out;
  std::string fence;
  std::size_t start = 0;
  while (start < md.size()) {
    std::size_t end = md.find('\n', start);
    if (end == std::string::npos) end = md.size();
    std::string line = md.substr(start, end - start);
    start = end + 1;
    std::size_t ticks = line.find_first_not_of('`');
    if (ticks >= 3 && ticks != std::string::npos) {
      if (fence.empty()) {
        fence = line.substr(0, ticks);
      } else if (line == fence) {
        fence.clear();
      }
      continue;
    }
    if (line == fence) {
      fence.clear();
      continue;
    }
    if (fence.empty()) out += line + "\n";
  }
  return out;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::record_sample_run(run_); }
  Report report(const fs::path& dir) {
    Store store(run_.db());
    return build_report(store, run_.run_id, dir);
  }
  testing::RecordedRun run_;
};

TEST_F(ReportTest, ClustersGroupTheSameFailureBiggestFirst) {
  Report r = report(run_.out());
  ASSERT_GE(r.clusters.size(), 3U);
  EXPECT_EQ(r.clusters[0].tests.size(), 30U);
  EXPECT_EQ(r.clusters[0].exception, "AssertionError");
  EXPECT_EQ(r.clusters[0].message, "<n> not less than or equal to <n>");
  EXPECT_EQ(r.summary.tests_total, 36);
  EXPECT_EQ(r.summary.files.at("not_run"), 1);
  EXPECT_EQ(r.files.front().status, "crashed") << "failing files first";
  EXPECT_DOUBLE_EQ(r.duration_s, 42);
}

TEST_F(ReportTest, LinksPointAtTheSourceLocallyAndUpstream) {
  Report r = report(run_.out());
  const ReportCase* zeros = nullptr;
  for (const auto& f : r.files) {
    for (const auto& c : f.cases) {
      if (c.test.name == "test_zeros") zeros = &c;
    }
  }
  ASSERT_NE(zeros, nullptr);
  EXPECT_EQ(zeros->links.local, "../project/tests/test_cuda.py#L4");
  EXPECT_EQ(zeros->links.upstream,
            "https://github.com/example/project/blob/0123456789abcdef0123456789abcdef01234567/"
            "project/tests/test_cuda.py#L4");
}

TEST(SourceLinks, AbsolutePathsAreLinkedUpstreamOnlyInsideTheCheckout) {
  // A GoogleTest suite's project root is often a build folder inside the checkout; its sources'
  // __FILE__ paths are absolute.
  testing::TempDir dir;
  const fs::path repo = dir / "repo";
  testing::write_file(repo / "src/math_test.cpp", "TEST(Math, Adds) {}\n");
  LinkBase base{repo / "build/tests", repo, repo / "build/out",
                "https://example.org/blob/{commit}/{path}#L{line}", "abc"};
  const SourceLinks inside = source_links({(repo / "src/math_test.cpp").string(), 7}, base);
  EXPECT_EQ(inside.local, "../../src/math_test.cpp#L7");
  EXPECT_EQ(inside.upstream, "https://example.org/blob/abc/src/math_test.cpp#L7");
  // A system header: it exists here, and is nowhere upstream.
  const SourceLinks system = source_links({"/usr/include/stdio.h", 3}, base);
  EXPECT_NE(system.local, "");
  EXPECT_EQ(system.upstream, "");
  // A path that does not exist here gets no local link; one outside the checkout, no upstream.
  const SourceLinks gone = source_links({(repo / "src/gone.cpp").string(), 1}, base);
  EXPECT_EQ(gone.local, "");
  EXPECT_EQ(gone.upstream, "https://example.org/blob/abc/src/gone.cpp#L1");
  EXPECT_EQ(source_links({"/opt/lib/helpers.py", 12}, base).upstream, "");
  // Relative paths are the project's, wherever it sits in the checkout.
  const SourceLinks rel = source_links({"suite_test.cpp", 0}, base);
  EXPECT_EQ(rel.local, "../tests/suite_test.cpp");
  EXPECT_EQ(rel.upstream, "https://example.org/blob/abc/build/tests/suite_test.cpp");
  EXPECT_EQ(source_links({"../../../elsewhere.cpp", 2}, base).upstream, "");
  // Without a known checkout, a relative path is its own upstream path, an absolute one has none.
  base.git_toplevel.clear();
  EXPECT_EQ(source_links({"suite_test.cpp", 4}, base).upstream,
            "https://example.org/blob/abc/suite_test.cpp#L4");
  EXPECT_EQ(source_links({(repo / "src/math_test.cpp").string(), 7}, base).upstream, "");
}

TEST_F(ReportTest, EveryRelativeLinkInTheMarkdownReportLeadsToAFile) {
  Store store(run_.db());
  for (const fs::path& dir : {run_.out(), run_.dir / "elsewhere/reports"}) {
    write_reports(store, run_.run_id, dir, {"md"});
    const std::string md = outside_code_blocks(testing::read_file(dir / "report.md"));
    int followed = 0;
    for (std::size_t p = 0; (p = md.find("](", p)) != std::string::npos; ++p) {
      if (p > 0 && md[p - 1] == '\\') continue;  // escaped text, not a link
      std::size_t end = md.find(')', p);
      std::string target = md.substr(p + 2, end - p - 2);
      if (target.rfind("http", 0) == 0) continue;
      target = target.substr(0, target.find('#'));
      EXPECT_TRUE(fs::exists(dir / target)) << target << " from " << dir;
      ++followed;
    }
    EXPECT_GT(followed, 30) << dir;
  }
}

TEST_F(ReportTest, LinksToTheRunsOwnFilesSurviveMovingTheOutputFolder) {
  Store store(run_.db());
  write_reports(store, run_.run_id, run_.out(), {"md"});
  fs::rename(run_.out(), run_.dir / "archived");
  const std::string md = testing::read_file(run_.dir / "archived/report.md");
  EXPECT_NE(md.find("[log](logs/test_ok.py.log)"), std::string::npos);
  EXPECT_TRUE(fs::exists(run_.dir / "archived/logs/test_ok.py.log"));
}

TEST_F(ReportTest, HostileTextCannotBreakAMarkdownTable) {
  const std::string md = render_markdown(report(run_.out()));
  const std::string text = outside_code_blocks(md);
  EXPECT_EQ(text.find("<script>"), std::string::npos);
  EXPECT_NE(text.find("&lt;script&gt;"), std::string::npos);
  // Every table row has as many unescaped pipes as its header.
  std::size_t start = 0;
  int header_pipes = -1;
  while (start < md.size()) {
    std::size_t end = md.find('\n', start);
    std::string line = md.substr(start, end - start);
    start = end == std::string::npos ? md.size() : end + 1;
    if (line.empty() || line[0] != '|') {
      header_pipes = -1;
      continue;
    }
    int pipes = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\') {
        ++i;
      } else if (line[i] == '|') {
        ++pipes;
      }
    }
    if (header_pipes < 0) header_pipes = pipes;
    EXPECT_EQ(pipes, header_pipes) << line.substr(0, 200);
    EXPECT_LT(line.size(), 2000U) << "a 10 KB message is cut";
  }
}

// What `runner runs` and trends read of a run (runs.summary) is what its report counted, and every
// writer of reports stores it.
TEST_F(ReportTest, TheRunSummaryIsTheReportsCountsAndIsStoredWithTheReports) {
  const Report r = report(run_.out());
  const nlohmann::json s = run_summary(r);
  EXPECT_EQ(s["tests"], r.summary.tests_total);
  EXPECT_DOUBLE_EQ(s["pass_rate"].get<double>(), r.summary.pass_rate);
  ASSERT_TRUE(r.previous);
  EXPECT_EQ(s["previous_run"], r.previous->previous_run);
  EXPECT_EQ(s["new_failures"], r.previous->new_failures.size());
  EXPECT_EQ(s["fixed"], r.previous->fixed.size());
  EXPECT_EQ(s["flaky"], r.flaky.size());
  EXPECT_TRUE(s["baseline_run"].is_null()) << "no baseline run: no differential counts";
  EXPECT_TRUE(s["regressions"].is_null());

  {
    Store store(run_.db());
    EXPECT_EQ(store.run(run_.run_id)->summary, "");
    write_reports(store, run_.run_id, run_.out(), "md");
  }
  Store store(run_.db());
  EXPECT_EQ(nlohmann::json::parse(store.run(run_.run_id)->summary), s);
}

// A differential run's reports list the tests of each class that matters, not just counts (issue
// 20): regressions, unlocked, newly skipped, failing both ways; report.md folds each list and
// shows at most 100 rows; every format links the baseline's own reports when they are there.
TEST(DifferentialLists, EveryClassThatMattersIsListedAndTheBaselinesReportsAreLinked) {
  testing::TempDir dir;
  Store store(dir / "results.db");
  auto run_of = [&](const std::string& mode, const std::string& out, std::int64_t baseline) {
    RunRecord run;
    run.suite = "s";
    run.suite_file = (dir / "suite.json").string();
    run.framework = "unittest";
    run.mode = mode;
    run.started_at = "2026-11-21T10:00:00Z";
    run.project_root = (dir / "project").string();
    run.tests_dir = "tests";
    run.out_dir = (dir / out).string();
    run.baseline_run = baseline;
    return store.begin_run(run, {"test_a.py"});
  };
  auto test = [](const std::string& name, CaseStatus status, const std::string& message = "") {
    TestCase c;
    c.classname = "tests.test_a.T";
    c.name = name;
    c.status = status;
    c.message = message;
    return c;
  };
  using S = CaseStatus;
  FileRecord file;
  file.path = "test_a.py";
  file.status = FileStatus::kFailed;
  std::vector<TestCase> before{test("test_ok", S::kPassed), test("test_broke", S::kPassed),
                               test("test_gone_gpu", S::kPassed), test("test_both", S::kFailed)};
  std::vector<TestCase> after{test("test_ok", S::kPassed), test("test_broke", S::kFailed, "boom"),
                              test("test_gone_gpu", S::kSkipped, "needs no GPU"),
                              test("test_both", S::kFailed, "still")};
  for (int i = 0; i < 120; ++i) {
    before.push_back(test(fmt::format("test_cuda_{:03}", i), S::kSkipped, "CUDA not available"));
    after.push_back(test(fmt::format("test_cuda_{:03}", i), S::kPassed));
  }
  const std::int64_t base = run_of("baseline", "base", 0);
  store.record_file(base, file, before);
  const std::int64_t shim = run_of("shim", "shim", base);
  store.record_file(shim, file, after);
  fs::create_directories(dir / "base");
  testing::write_file(dir / "base" / "report.md", "# baseline\n");  // no report.html there

  const Report r = build_report(store, shim, dir / "shim");
  ASSERT_TRUE(r.differential);
  const ReportDifferential& d = *r.differential;
  ASSERT_EQ(d.regressions.size(), 1U);
  EXPECT_EQ(d.regressions[0].name, "test_broke");
  ASSERT_EQ(d.newly_skipped.size(), 1U);
  EXPECT_EQ(d.newly_skipped[0].message, "needs no GPU");
  ASSERT_EQ(d.broken_both.size(), 1U);
  EXPECT_EQ(d.broken_both[0].name, "test_both");
  ASSERT_EQ(d.unlocked.size(), 120U);
  EXPECT_EQ(d.unlocked[0].baseline_status, "skipped");
  EXPECT_EQ(d.baseline_md, "../base/report.md");
  EXPECT_EQ(d.baseline_html, "") << "not there: not linked";

  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("The baseline's report (run 1): [report.md](../base/report.md)\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("### Unlocked\n\n<details><summary>120 tests</summary>"), std::string::npos);
  EXPECT_NE(md.find("test\\_cuda\\_099"), std::string::npos);
  EXPECT_EQ(md.find("test\\_cuda\\_100"), std::string::npos) << "at most 100 rows";
  EXPECT_NE(md.find("… and 20 more: report.html and report.json (`diff_class`) list every test."),
            std::string::npos);
  EXPECT_NE(md.find("| tests.test\\_a.T.test\\_gone\\_gpu | passed → skipped | "
                    "needs no GPU |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("### Failing with and without the shim\n\n<details><summary>1 test</summary>"),
            std::string::npos);

  const std::string html = render_html(r);
  EXPECT_NE(html.find("test_cuda_119"), std::string::npos) << "report.html lists every test";
  EXPECT_NE(html.find("<h3>Unlocked</h3>\n<details class=\"tests\"><summary>120 tests</summary>"),
            std::string::npos);
  EXPECT_NE(html.find("<a href=\"../base/report.md\">report.md</a>"), std::string::npos);

  const nlohmann::json j = render_json(r)["differential"];
  EXPECT_EQ(j["unlocked"].size(), 120U);
  EXPECT_EQ(j["newly_skipped"][0]["name"], "test_gone_gpu");
  EXPECT_EQ(j["broken_both"][0]["status"], "failed");
  EXPECT_EQ(j["baseline_reports"]["md"], "../base/report.md");
  EXPECT_TRUE(j["baseline_reports"]["html"].is_null());
}

// Newly skipped tests that want no GPU (accelerate's @require_cpu) are told apart from real new
// skips in every format; without any, the row reads as before.
TEST(DifferentialMeaning, NewlySkippedSaysHowManySkipForTheMasquerade) {
  Report r;
  r.run.id = 2;
  r.run.suite = "accelerate";
  r.run.mode = "shim";
  r.environment = nlohmann::json::object();
  r.differential.emplace();
  r.differential->baseline_run = 1;
  r.differential->counts = {{"newly_skipped", 12}, {"compatible", 3}};
  EXPECT_EQ(differential_meaning(*r.differential, "newly_skipped", "m"), "m");
  r.differential->masquerade_skips = 11;
  EXPECT_EQ(differential_meaning(*r.differential, "compatible", "m"), "m");
  const std::string row =
      "11 of them want no GPU and skip because the CUDA masquerade says one is there (expected)";
  EXPECT_NE(render_markdown(r).find("| newly_skipped | 12 | passed without the shim, skipped "
                                    "with it; " +
                                    row + " |"),
            std::string::npos);
  EXPECT_EQ(render_json(r)["differential"]["masquerade_skips"], 11);
}

TEST(MarkdownEscaping, CellsAndCodeBlocks) {
  EXPECT_EQ(md_cell("a|b`c`\n<x>&[l](u)*_"), "a\\|b\\`c\\` &lt;x&gt;&amp;\\[l\\](u)\\*\\_");
  EXPECT_EQ(md_cell(std::string(400, 'y'), 10), std::string(10, 'y') + "…");
  EXPECT_EQ(md_code_block("has ``` inside"), "````text\nhas ``` inside\n````\n");
}

TEST(MarkdownClusters, AClusterWithoutAnExceptionTypeIsHeadedByItsMessage) {
  // GoogleTest's failures have no exception type; a heading "(no exception)" named none of them.
  Report r;
  r.environment = nlohmann::json::object();
  ReportCluster gtest;
  gtest.signature = "s1";
  gtest.message = "Expected equality of these values: add(<n>, <n>) Which is: <n> <n>";
  gtest.tests = {{"math_test", "Math", "Adds", {}}};
  ReportCluster python;
  python.signature = "s2";
  python.exception = "AssertionError";
  python.message = "<n> != <n>";
  python.tests = {{"tests/test_a.py", "tests.test_a.T", "test_x", {}}};
  ReportCluster bare;
  bare.signature = "s3";
  bare.tests = {{"math_test", "Math", "Crashes", {}}};
  r.clusters = {gtest, python, bare};
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("### 1. Expected equality of these values: add(&lt;n&gt;, &lt;n&gt;) Which is: "
                    "&lt;n&gt; &lt;n&gt; — 1 test\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("### 2. AssertionError — 1 test\n"), std::string::npos) << md;
  EXPECT_NE(md.find("### 3. (no message) — 1 test\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("(no exception)"), std::string::npos) << md;
}

TEST_F(ReportTest, JsonHasTheDocumentedShape) {
  nlohmann::json j = render_json(report(run_.out()));
  EXPECT_EQ(j["schema_version"], 5);
  for (const char* k : {"run", "summary", "files", "clusters"}) EXPECT_TRUE(j.contains(k)) << k;
  const auto& f = j["files"][0];
  for (const char* k : {"path", "status", "duration_s", "log", "cases"}) {
    EXPECT_TRUE(f.contains(k)) << k;
  }
  const auto& c = f["cases"][0];
  for (const char* k :
       {"classname", "name", "status", "duration_s", "message", "signature", "source"}) {
    EXPECT_TRUE(c.contains(k)) << k;
  }
  const auto& cl = j["clusters"][0];
  for (const char* k : {"signature", "count", "exception", "message", "tests"}) {
    EXPECT_TRUE(cl.contains(k)) << k;
  }
  EXPECT_EQ(cl["count"], 30);
  EXPECT_EQ(j["run"]["environment"]["torch"], "2.13.0+cpu");
  // Redirections: summed per (api, requested, used), most calls first.
  const auto& red = j["redirections"];
  ASSERT_EQ(red.size(), 3U);
  for (const char* k : {"api", "requested", "used", "count", "files", "first_call_site"}) {
    EXPECT_TRUE(red[0].contains(k)) << k;
  }
  EXPECT_EQ(red[1]["api"], "torch.zeros");
  EXPECT_EQ(red[1]["count"], 5);
  EXPECT_EQ(red[1]["call_sites"], 2);
  EXPECT_EQ(red[1]["first_call_site"]["line"], 7);
}

TEST_F(ReportTest, JunitIsWellFormedXmlWithOneSuitePerFile) {
  const std::string xml = render_junit(report(run_.out()));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str()));
  auto suites = doc.child("testsuites");
  int n = 0;
  for (auto s : suites.children("testsuite")) {
    (void)s;
    ++n;
  }
  EXPECT_EQ(n, 6);
  EXPECT_EQ(suites.attribute("failures").as_int(), 31);
  // The import error file and the never-run file still show up.
  EXPECT_NE(xml.find("name=\"test_import.py\""), std::string::npos);
  EXPECT_EQ(xml_safe(std::string("a\x01"
                                 "b\xEF\xBF\xBE"
                                 "c")),
            "abc");
}

TEST_F(ReportTest, JunitGivesAFlakyTestItsFailedAttemptsAsSurefireDoes) {
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(render_junit(report(run_.out())).c_str()));
  auto ok = doc.select_node("//testcase[@name='test_ok']").node();
  ASSERT_TRUE(ok);
  EXPECT_FALSE(ok.child("failure"));  // it passed in the end: a pass, counted as one
  auto flaky = ok.child("flakyFailure");
  ASSERT_TRUE(flaky);
  EXPECT_STREQ(flaky.attribute("message").value(), "TimeoutError: slow disk");
  EXPECT_STREQ(flaky.attribute("type").value(), "TimeoutError");
  EXPECT_FALSE(flaky.next_sibling("flakyFailure"));
  EXPECT_EQ(doc.child("testsuites").attribute("failures").as_int(), 31);
}

TEST(JunitAttemptsTest, ATestThatFailedEveryRerunKeepsItsFailureAndListsTheReruns) {
  ReportCase c;
  c.test.classname = "tests.test_x.T";
  c.test.name = "test_y";
  c.test.status = CaseStatus::kFailed;
  c.test.exception = "AssertionError";
  c.test.message = "first";
  auto attempt = [](int n, CaseStatus status, std::string message) {
    return CaseAttempt{"test_x.py", "tests.test_x.T", "test_y", n, status, std::move(message)};
  };
  c.attempts = {attempt(1, CaseStatus::kFailed, "AssertionError: first"),
                attempt(2, CaseStatus::kError, "RuntimeError: setUp broke"),
                attempt(3, CaseStatus::kFailed, "no type here")};
  Report r;
  ReportFile f;
  f.file.path = "test_x.py";
  f.file.status = FileStatus::kFailed;
  f.status = "failed";
  f.cases.push_back(c);
  r.files.push_back(f);

  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(render_junit(r).c_str()));
  auto tc = doc.select_node("//testcase[@name='test_y']").node();
  ASSERT_TRUE(tc);
  std::vector<std::string> children;
  for (auto e : tc.children())
    children.push_back(std::string(e.name()) + " " + e.attribute("type").value() + " " +
                       e.attribute("message").value());
  EXPECT_EQ(children, (std::vector<std::string>{"failure AssertionError AssertionError: first",
                                                "rerunError RuntimeError RuntimeError: setUp broke",
                                                "rerunFailure  no type here"}));
  EXPECT_EQ(doc.child("testsuites").attribute("failures").as_int(), 1);
  EXPECT_EQ(doc.child("testsuites").attribute("errors").as_int(), 0);
}

TEST(DeviceProbeText, ATorchOutsideTheSupportedReleasesIsNamedFirst) {
  const auto environment = nlohmann::json::parse(R"({"device_probe": {
    "probe_error": "devshim-probe exited with 127: undefined symbol",
    "torch_support": {"range": "2.13–2.15", "torch": "2.8.0+cu128", "source": "python",
                      "supported": false}}})");
  EXPECT_EQ(device_probe_text(environment),
            "torch 2.8.0+cu128 is outside the releases devshim-probe supports (2.13–2.15) · "
            "unavailable: devshim-probe exited with 127: undefined symbol");
  const auto inside = nlohmann::json::parse(R"({"device_probe": {"torch_version": "2.14.1",
    "torch_support": {"range": "2.13–2.15", "torch": "2.14.1", "source": "probe",
                      "supported": true}}})");
  EXPECT_EQ(device_probe_text(inside), "LibTorch 2.14.1");
}

}  // namespace
}  // namespace devshim
