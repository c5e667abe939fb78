// report.html: hostile text stays text, links are only the model's, nothing is loaded from
// elsewhere. (tests/reports/browser checks the same page in real headless Chromium.)
#include "reports/html.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "reports/html_text.h"
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

TEST(SafeHref, RefusesEverySchemeButHttpAndTricksBrowsersUndo) {
  for (const char* bad :
       {"javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)",
        "java\tscript:alert(1)", "java\nscript:alert(1)", "\x01javascript:alert(1)",
        "vbscript:msgbox(1)", "data:text/html,<script>alert(1)</script>", "file:///etc/passwd",
        "//evil.example/x", "https://", "http:evil", "mailto:a@b.c", ""}) {
    EXPECT_EQ(html::safe_href(bad), "") << bad;
  }
  EXPECT_EQ(html::safe_href("HTTPS://Example.org/a?b=1#c"), "HTTPS://Example.org/a?b=1#c");
  EXPECT_EQ(html::safe_href("#cluster-1"), "#cluster-1");
  EXPECT_EQ(html::safe_href("/abs/tests/test_a.py#L3"), "/abs/tests/test_a.py#L3");
  EXPECT_EQ(html::safe_href("../a b.py#L3"), "../a%20b.py#L3");
  EXPECT_EQ(html::safe_href("x\"><script>"), "x%22%3E%3Cscript%3E");
  EXPECT_EQ(html::safe_href("/\\evil.example"), "/%5Cevil.example");
}

TEST(HtmlEscape, EveryMarkupCharacterAndControlCharacters) {
  EXPECT_EQ(html::escape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
  EXPECT_EQ(html::escape("tab\tnl\ncr\r"), "tab\tnl\ncr\r");
  EXPECT_EQ(html::escape(std::string("nul\0bel\a", 8)),
            "nul\xEF\xBF\xBD"
            "bel\xEF\xBF\xBD");
  EXPECT_EQ(html::escape("é | `x`"), "é | `x`");
}

// ---- a Report built by hand: no store, every hostile value where a renderer could slip ------

constexpr const char* kHostile = "test_<script>alert(1)</script>\"q\"'a'|`tick`\nline2";

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80         ? 1
                          : (c >> 5) == 6  ? 2
                          : (c >> 4) == 14 ? 3
                          : (c >> 3) == 30 ? 4
                                           : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

std::size_t count(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t p = 0; (p = text.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

/// Every href="..." value of the page.
std::vector<std::string> hrefs(const std::string& page) {
  std::vector<std::string> out;
  for (std::size_t p = 0; (p = page.find("href=\"", p)) != std::string::npos;) {
    p += 6;
    out.push_back(page.substr(p, page.find('"', p) - p));
  }
  return out;
}

std::string repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

ReportCase hand_case(const std::string& name, CaseStatus status, const std::string& message,
                     const std::string& signature, SourceLinks links) {
  ReportCase c;
  c.test.classname = "tests.test_a.T";
  c.test.name = name;
  c.test.status = status;
  c.test.exception = status == CaseStatus::kPassed ? "" : "AssertionError";
  c.test.message = message;
  c.signature = signature;
  c.links = std::move(links);
  return c;
}

Report hand_built_report() {
  Report r;
  r.run.id = 42;
  r.run.suite = "suite <b>x</b>";
  r.run.suite_file = "suites/x/suite.json\" onmouseover=\"alert(1)";
  r.run.targets = {"tests/test_a.py"};
  r.run.command_line = {"runner", "run", "suites/x/suite.json", "--out", "my out"};
  r.run.status = "failed";
  r.run.started_at = "2026-11-21T22:46:00Z";
  r.run.finished_at = "2026-11-21T22:48:05Z";
  r.run.host = "box";
  r.run.project_root = "/proj";
  r.run.project_commit = "abcdef0123456789abcdef0123456789abcdef01";
  r.run.jobs = 2;
  r.environment = {{"python", "3.11.2"},
                   {"torch", "2.5.1"},
                   {"cuda_available", true},
                   {"cuda_device_count", 2},
                   {"mps_available", false},
                   {"shim", {{"name", "devshim"}, {"version", "0.1.0"}, {"policy", "default"}}},
                   {"cores", 8},
                   {"runner_version", "0.1.0"}};
  r.duration_s = 125;

  const std::string up = "https://github.com/o/p/blob/abc/tests/test_a.py#L";
  ReportFile failing;
  failing.file.path = "tests/test_a.py";
  failing.status = "failed";
  failing.log_link = "javascript:alert('log')";
  failing.cases = {
      hand_case("test_ok", CaseStatus::kPassed, "", "", {}),
      hand_case(kHostile, CaseStatus::kFailed, "msg <img src=x onerror=alert(1)> | `x`\nnext", "s1",
                {"JaVaScRiPt:alert(1)", up + "3"}),
      hand_case("test_long", CaseStatus::kFailed, std::string(10 * 1024, 'y'), "s1",
                {"../tests/test_a.py#L7", "data:text/html,<script>alert(1)</script>"}),
      hand_case("test_utf8", CaseStatus::kError, "a" + repeat("é", 400) + std::string("\0end", 4),
                "s2", {"//evil.example/x", "vbscript:x"})};
  failing.counts = {{"passed", 1}, {"failed", 2}, {"error", 1}};
  ReportFile import_error;
  import_error.file.path = "tests/test_b.py";
  import_error.file.note = "ImportError: <no module>";
  import_error.status = "error";
  import_error.log_link = "logs/tests/test_b.py.log";
  ReportFile passed;
  passed.file.path = "tests/test_passing.py";
  passed.status = "passed";
  passed.counts = {{"passed", 3}};
  r.files = {failing, import_error, passed};

  r.summary.files = {{"failed", 1}, {"error", 1}, {"passed", 1}};
  r.summary.files_total = 3;
  r.summary.tests = {{"passed", 4}, {"failed", 2}, {"error", 1}};
  r.summary.tests_total = 7;
  r.summary.pass_rate = 4.0 / 7.0;

  ReportCluster big;
  big.signature = "s1";
  big.exception = "AssertionError";
  big.message = "msg <img src=x onerror=alert(1)> | `x`";
  big.example_message = big.message;
  big.example_traceback = "Traceback:\n  File \"<script>\", line 1\n";
  big.tests = {{"tests/test_a.py", "tests.test_a.T", kHostile, failing.cases[1].links},
               {"tests/test_a.py", "tests.test_a.T", "test_long", failing.cases[2].links}};
  ReportCluster small;
  small.signature = "s2";
  small.exception = "UnicodeError";
  small.message = "<str>";
  small.tests = {{"tests/test_a.py", "tests.test_a.T", "test_utf8", failing.cases[3].links}};
  r.clusters = {big, small};
  return r;
}

TEST(HtmlHandBuilt, HostileTextStaysText) {
  const std::string page = render_html(hand_built_report());
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<b>x</b>"), std::string::npos);
  EXPECT_EQ(count(page, "<script"), 1U);  // the page's own
  EXPECT_NE(page.find("test_&lt;script&gt;alert(1)&lt;/script&gt;&quot;q&quot;&#39;a&#39;|`tick`"
                      "\nline2"),
            std::string::npos);
  // An attribute value cannot be closed by the text it carries.
  EXPECT_EQ(page.find("\" onmouseover="), std::string::npos);
  EXPECT_NE(page.find("title=\"suites/x/suite.json&quot; onmouseover=&quot;alert(1)\""),
            std::string::npos);
  EXPECT_TRUE(valid_utf8(page));
  EXPECT_EQ(page.find('\0'), std::string::npos);
}

TEST(HtmlHandBuilt, OnlyTheModelsSafeLinks) {
  const std::string page = render_html(hand_built_report());
  std::string lower = page;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_EQ(lower.find("javascript:"), std::string::npos);
  EXPECT_EQ(lower.find("vbscript:"), std::string::npos);
  EXPECT_EQ(lower.find("data:"), std::string::npos);
  EXPECT_EQ(lower.find("evil.example"), std::string::npos);
  for (const std::string& href : hrefs(page)) {
    const bool ok = href.starts_with("#") || href.starts_with("https://") ||
                    href.starts_with("../") || href.starts_with("logs/");
    EXPECT_TRUE(ok) << href;
  }
  EXPECT_NE(page.find("href=\"../tests/test_a.py#L7\""), std::string::npos);
  EXPECT_NE(page.find("href=\"https://github.com/o/p/blob/abc/tests/test_a.py#L3\""),
            std::string::npos);
  EXPECT_NE(page.find("href=\"logs/tests/test_b.py.log\""), std::string::npos);
  EXPECT_NE(page.find("href=\"#cluster-2\""), std::string::npos);
  EXPECT_NE(page.find("href=\"#failure-1\""), std::string::npos);
}

TEST(HtmlHandBuilt, AClusterWithoutAnExceptionTypeShowsItsMessageAlone) {
  Report r = hand_built_report();
  r.clusters[1].exception.clear();  // as for GoogleTest's failures
  const std::string page = render_html(r);
  EXPECT_EQ(count(page, "<code class=\"exception\">"), 1U);
  EXPECT_NE(page.find("<code class=\"exception\">AssertionError</code>"), std::string::npos);
  EXPECT_NE(page.find("#2</span> 1 test</h3>\n<div class=\"message mono\"><span class=\"text\">"
                      "&lt;str&gt;"),
            std::string::npos);
  EXPECT_EQ(page.find("(no exception)"), std::string::npos);
}

TEST(HtmlHandBuilt, LongTextIsCutInCellsAndKeptWhole) {
  const std::string page = render_html(hand_built_report());
  const std::string full = std::string(10 * 1024, 'y');
  EXPECT_EQ(count(page, full), 1U);  // whole, once, inside the <details>
  const auto row = page.find("test_<wbr>long</span>");
  ASSERT_NE(row, std::string::npos);
  const auto cut = page.find("<details class=\"long\"><summary><span class=\"cut\">", row);
  ASSERT_NE(cut, std::string::npos);
  const auto shown = page.find(" … (", cut);
  ASSERT_NE(shown, std::string::npos);
  EXPECT_LE(shown - cut, 600U);
  // The cut of a message of two-byte characters still leaves valid UTF-8.
  EXPECT_TRUE(valid_utf8(page));
}

TEST(HtmlHandBuilt, EverySectionSelfContained) {
  const std::string page = render_html(hand_built_report());
  std::size_t last = 0;
  for (const char* id :
       {"id=\"environment\"", "id=\"later-sections\"", "id=\"summary\"", "id=\"clusters\"",
        "id=\"failures\"", "id=\"failure-filter\"", "id=\"failures-table\"", "id=\"files\""}) {
    const auto at = page.find(id);
    ASSERT_NE(at, std::string::npos) << id;
    EXPECT_GT(at, last) << id << " out of order";
    last = at;
  }
  EXPECT_NE(page.find("document.body.dataset.ready = \"1\""), std::string::npos);
  EXPECT_EQ(page.find("src=\""), std::string::npos);  // (the hostile message has src= as text)
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
  // Environment.
  for (const char* s :
       {"3.11.2", "2.5.1", "CUDA: yes (2 devices) · MPS: no", "policy default",
        "8 cores · 2 workers", "/proj @ abcdef012345", "2 min 05 s", "--out &#39;my out&#39;"}) {
    EXPECT_NE(page.find(s), std::string::npos) << s;
  }
  // Three failing cases and the file that failed without a case; clusters biggest first.
  EXPECT_EQ(count(page, "class=\"failure\""), 4U);
  EXPECT_LT(page.find("id=\"cluster-1\""), page.find("id=\"cluster-2\""));
  EXPECT_NE(page.find("2 tests · <code class=\"exception\">AssertionError"), std::string::npos);
  // Passed files collapsed, the others not.
  const auto collapsed = page.find("<details class=\"passed-files\">");
  ASSERT_NE(collapsed, std::string::npos);
  EXPECT_GT(page.find("tests/test_passing.py"), collapsed);
  EXPECT_LT(page.rfind("tests/test_b.py", collapsed), collapsed);
}

TEST(HtmlHandBuilt, NoFailuresStillAPage) {
  Report r = hand_built_report();
  r.files.resize(1);
  r.files[0].cases.resize(1);  // test_ok only
  r.files[0].status = "passed";
  r.clusters.clear();
  const std::string page = render_html(r);
  EXPECT_NE(page.find("No test failed."), std::string::npos);
  EXPECT_EQ(page.find("id=\"failure-filter\""), std::string::npos);
  EXPECT_NE(page.find("document.body.dataset.ready"), std::string::npos);
}

}  // namespace
}  // namespace devshim
