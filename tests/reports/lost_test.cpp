// Lost tests and file errors (issue 32) in the report model, every format and --fail-on: a
// differential run whose shim run lost a file to an import error never reads as harmless, and
// the next run does not call that file's tests new.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "reports/fail_on.h"
#include "reports/html.h"
#include "reports/json_report.h"
#include "reports/junit_xml.h"
#include "reports/markdown.h"
#include "reports/report.h"
#include "runner/results/gap_log.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;

TestCase test_of(const std::string& name, CaseStatus status) {
  TestCase t;
  t.classname = "tests.ignite.metrics.test_gpu_info";
  t.name = name;
  t.status = status;
  if (is_failure(status)) {
    t.exception = "AssertionError";
    t.message = name + " broke";
  }
  return t;
}

// ignite's real collection error under the shim (tests/parsers/fixtures/gaps/issue32/).
TestCase collection_error() {
  TestCase c = test_of("<collection>", CaseStatus::kError);
  c.exception = "TypeError";
  c.message =
      "module, class, method, function, traceback, frame, or code object was expected, got "
      "builtin_function_or_method";
  std::ifstream in(std::string(PARSER_FIXTURES_DIR) +
                   "/gaps/issue32/ignite-oldshim-collection.txt");
  std::ostringstream s;
  s << in.rdbuf();
  c.traceback = s.str();
  return c;
}

class LostTests : public ::testing::Test {
 protected:
  // A run of a.py and b.py begun in the store.
  std::int64_t begin(Store& store, const std::string& mode, std::int64_t baseline,
                     std::int64_t previous,
                     const std::vector<std::string>& files = {"a.py", "b.py"}) {
    RunRecord r;
    r.suite = "ignite";
    r.suite_file = "/s/suite.json";
    r.framework = "pytest";
    r.started_at = "2026-11-25T06:00:00Z";
    r.project_root = "/ignite";
    r.tests_dir = "tests/ignite";
    r.out_dir = (dir_ / "out").string();
    r.mode = mode;
    r.baseline_run = baseline;
    r.previous_run = previous;
    return store.begin_run(r, files);
  }
  // One run of c.py with `cases`: each "test_<group>_<index>" and its status.
  std::int64_t record_cases(const std::string& mode, std::int64_t baseline,
                            const std::vector<std::pair<std::string, CaseStatus>>& cases) {
    Store store(db());
    const std::int64_t id = begin(store, mode, baseline, 0, {"c.py"});
    FileRecord c;
    c.path = "c.py";
    c.status = FileStatus::kFailed;
    std::vector<TestCase> tests;
    for (const auto& [name, status] : cases) tests.push_back(test_of(name, status));
    store.record_file(id, c, tests);
    store.finish_run(id, "failed", "2026-11-25T06:01:00Z");
    return id;
  }
  // One run of a.py and b.py: each file's tests, or a collection error when b_fails.
  std::int64_t record(const std::string& mode, std::int64_t baseline, std::int64_t previous,
                      bool b_fails, CaseStatus a2 = CaseStatus::kPassed) {
    Store store(db());
    const std::int64_t id = begin(store, mode, baseline, previous);
    FileRecord a;
    a.path = "a.py";
    a.status = is_failure(a2) ? FileStatus::kFailed : FileStatus::kPassed;
    store.record_file(id, a, {test_of("test_one", CaseStatus::kPassed), test_of("test_two", a2)});
    FileRecord b;
    b.path = "b.py";
    if (b_fails) {
      b.status = FileStatus::kError;
      b.exit_code = 2;
      store.record_file(id, b, {collection_error()});
    } else {
      b.status = FileStatus::kFailed;
      store.record_file(
          id, b,
          {test_of("test_three", CaseStatus::kFailed), test_of("test_four", CaseStatus::kSkipped)});
    }
    store.finish_run(id, "failed", "2026-11-25T06:01:00Z");
    return id;
  }
  // One run in which both files fail to collect: nothing passes.
  std::int64_t record_broken(const std::string& mode, std::int64_t baseline) {
    Store store(db());
    const std::int64_t id = begin(store, mode, baseline, 0);
    for (const char* path : {"a.py", "b.py"}) {
      FileRecord f;
      f.path = path;
      f.status = FileStatus::kError;
      f.exit_code = 2;
      store.record_file(id, f, {collection_error()});
    }
    store.finish_run(id, "failed", "2026-11-25T06:01:00Z");
    return id;
  }
  Report report(std::int64_t run) {
    Store store(db());
    return build_report(store, run, dir_ / "out");
  }
  std::filesystem::path db() const { return dir_ / "results.db"; }
  TempDir dir_;
};

TEST_F(LostTests, ADifferentialRunCountsTheBaselinesMissingTestsAsRegressions) {
  const std::int64_t baseline = record("baseline", 0, 0, false);
  const std::int64_t shim = record("shim", baseline, 0, true);
  const Report r = report(shim);
  ASSERT_TRUE(r.differential);
  const ReportDifferential& d = *r.differential;
  EXPECT_TRUE(d.regressions.empty());
  ASSERT_EQ(d.lost.size(), 2U);
  EXPECT_EQ(d.counts.at("lost"), 2);
  EXPECT_EQ(d.lost[0].name, "test_three");
  EXPECT_EQ(d.lost[0].baseline_status, "failed");
  EXPECT_EQ(d.lost[0].status, "absent");
  EXPECT_EQ(d.lost[0].message,
            "its file failed: TypeError: module, class, method, function, traceback, frame, or "
            "code object was expected, got builtin_function_or_method");
  EXPECT_EQ(d.baseline_passed, 2) << "a.py's two";
  EXPECT_EQ(run_summary(r)["regressions"], 2);
  EXPECT_EQ(run_summary(r)["lost"], 2);
  EXPECT_EQ(run_summary(r)["file_errors"], 1);
  // --fail-on regressions trips on lost tests alone, and says why.
  EXPECT_EQ(fail_on_exit_code(FailOn::kRegressions, r, kExitFailures), kExitFailures);
  EXPECT_EQ(fail_on_exit_code(FailOn::kRegressions, r, kExitOk), kExitFailures);
  EXPECT_NE(fail_on_reason(FailOn::kRegressions, r, kExitFailures).find("2 lost tests"),
            std::string::npos);
  // The file's error, with where it happened.
  const ReportFile* b = nullptr;
  for (const ReportFile& f : r.files) b = f.file.path == "b.py" ? &f : b;
  ASSERT_TRUE(b && b->error);
  EXPECT_EQ(b->error->exception, "TypeError");
  EXPECT_EQ(b->lost, 2);
  ASSERT_EQ(b->error->frames.size(), 3U);
  EXPECT_EQ(frame_text(b->error->frames[1]),
            "torch/package/package_importer.py:742 in _patched_getfile");
}

TEST_F(LostTests, EveryFormatNamesTheLostTestsAndTheException) {
  const std::int64_t baseline = record("baseline", 0, 0, false);
  const Report r = report(record("shim", baseline, 0, true));
  const std::string md = render_markdown(r);
  EXPECT_EQ(md.find("None: every test that passed without the shim passes with it."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| lost | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("### Lost\n"), std::string::npos) << md;
  EXPECT_NE(md.find("tests/ignite/b.py::tests.ignite.metrics.test\\_gpu\\_info::test\\_three | "
                    "failed → absent"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("## File errors"), std::string::npos) << md;
  EXPECT_NE(md.find("| b.py | error | TypeError: module, class, method"), std::string::npos) << md;
  EXPECT_NE(md.find("torch/package/package\\_importer.py:742 in \\_patched\\_getfile"),
            std::string::npos)
      << md;
  const nlohmann::json j = render_json(r);
  EXPECT_EQ(j["schema_version"], 5);
  ASSERT_EQ(j["differential"]["lost"].size(), 2U);
  EXPECT_EQ(j["differential"]["counts"]["lost"], 2);
  const auto& bj = j["files"][0]["path"] == "b.py" ? j["files"][0] : j["files"][1];
  EXPECT_EQ(bj["error"]["exception"], "TypeError");
  EXPECT_EQ(bj["lost"], 2);
  EXPECT_EQ(bj["error"]["frames"][1]["function"], "_patched_getfile");
  const std::string html = render_html(r);
  EXPECT_NE(html.find("<section id=\"file-errors\">"), std::string::npos);
  EXPECT_NE(html.find("<h3>Lost</h3>"), std::string::npos);
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(render_junit(r).c_str()));
  auto lost = doc.select_nodes("//testsuite[@name='b.py']/testcase/error[@type='lost']");
  EXPECT_EQ(lost.size(), 2U);
}

// Each regression and lost test names the gap entry whose evidence it is, and the Regressions
// heading counts them by entry, so that a reader tells a device-type check from a shim fault.
TEST_F(LostTests, EachRegressionNamesItsGapEntry) {
  const std::int64_t baseline = record("baseline", 0, 0, false);
  const std::int64_t shim = record("shim", baseline, 0, true, CaseStatus::kFailed);
  {
    Store store(db());
    GapLog(store).update_from_run(shim);
  }
  const Report r = report(shim);
  ASSERT_TRUE(r.differential);
  const ReportDifferential& d = *r.differential;
  ASSERT_EQ(d.regressions.size(), 1U);
  EXPECT_EQ(d.regressions[0].gap, "unattributed AssertionError: test_two broke");
  ASSERT_EQ(d.lost.size(), 2U);
  for (const auto& t : d.lost) EXPECT_EQ(t.gap.rfind("file error: TypeError: ", 0), 0U) << t.gap;
  const auto by_gap = regressions_by_gap(d);
  ASSERT_EQ(by_gap.size(), 2U);
  EXPECT_EQ(by_gap[0].second, 2) << "the file error's two lost tests first";
  const std::string md = render_markdown(r);
  EXPECT_NE(
      md.find(
          "| AssertionError: test\\_two broke | unattributed AssertionError: test\\_two broke |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("By gap entry (what each is and what to do: Gaps, below): 2 file error: "
                    "TypeError: "),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(", 1 unattributed AssertionError: test\\_two broke."), std::string::npos) << md;
  EXPECT_NE(render_html(r).find("By gap entry"), std::string::npos);
  EXPECT_EQ(render_json(r)["differential"]["regressions"][0]["gap"],
            "unattributed AssertionError: test_two broke");
}

// A baseline that passed nothing compares nothing: no format may say "no regression", and
// --fail-on regressions gives the run's own exit code instead of a vacuous 0.
TEST_F(LostTests, ABaselineThatPassedNoTestComparesNothing) {
  const std::int64_t baseline = record_broken("baseline", 0);
  const Report r = report(record_broken("shim", baseline));
  ASSERT_TRUE(r.differential);
  const ReportDifferential& d = *r.differential;
  EXPECT_TRUE(d.regressions.empty());
  EXPECT_TRUE(d.lost.empty());
  EXPECT_EQ(d.baseline_passed, 0);
  const std::string expected =
      "Nothing compared: baseline run " + std::to_string(baseline) + " passed no test";
  const std::string md = render_markdown(r);
  EXPECT_EQ(md.find("None: every test"), std::string::npos) << md;
  EXPECT_NE(md.find(expected), std::string::npos) << md;
  const std::string html = render_html(r);
  EXPECT_EQ(html.find("None: every test"), std::string::npos);
  EXPECT_NE(html.find(expected), std::string::npos);
  EXPECT_EQ(render_json(r)["differential"]["baseline_passed"], 0);
  EXPECT_TRUE(run_summary(r)["regressions"].is_null()) << "`runner runs` shows -, not 0";
  EXPECT_EQ(run_summary(r)["baseline_passed"], 0);
  EXPECT_EQ(fail_on_exit_code(FailOn::kRegressions, r, kExitFailures), kExitFailures);
  EXPECT_EQ(fail_on_exit_code(FailOn::kRegressions, r, kExitOk), kExitOk);
  EXPECT_NE(fail_on_reason(FailOn::kRegressions, r, kExitFailures).find("nothing compared"),
            std::string::npos);
}

// Renumbered groups are not compared case by case, but each of the baseline's passing cases that
// does not fail under the shim is a case that does not fail there: the rest fail or are gone,
// whether the shim added cases or took some away (a file that stopped early).
TEST_F(LostTests, RenumberedGroupsCountTheRegressionsTheirCountsProve) {
  constexpr CaseStatus kPass = CaseStatus::kPassed, kFail = CaseStatus::kFailed,
                       kSkip = CaseStatus::kSkipped;
  const std::int64_t baseline = record_cases("baseline", 0,
                                             {{"test_a_0", kPass},
                                              {"test_a_1", kPass},
                                              {"test_a_2", kFail},  // a: 1 case added
                                              {"test_b_0", kPass},
                                              {"test_b_1", kPass},  // b: 1 added
                                              {"test_c_0", kPass},
                                              {"test_c_1", kPass},
                                              {"test_c_2", kPass},  // c: 1 taken away
                                              {"test_d_0", kPass}});
  const Report r = report(record_cases("shim", baseline,
                                       {{"test_a_0", kFail},
                                        {"test_a_1", kFail},
                                        {"test_a_2", kFail},
                                        {"test_a_3", kPass},
                                        {"test_b_0", kFail},
                                        {"test_b_1", kPass},
                                        {"test_b_2", kSkip},
                                        {"test_c_0", kFail},
                                        {"test_c_1", kFail},
                                        {"test_d_0", kPass}}));
  ASSERT_TRUE(r.differential);
  const ReportDifferential& d = *r.differential;
  // a: 2 passed before, 1 does not fail now: 1. b: 2 passed, 2 do not fail (a pass, a skip): 0.
  // c: 3 passed, 0 do not fail: 3, a case taken away among them.
  EXPECT_EQ(d.renumbered_regressions, 4);
  EXPECT_EQ(d.counts.at("renumbered"), 9);
  EXPECT_EQ(d.renumbered_failing, 6);
  EXPECT_EQ(d.counts.at("compatible"), 1) << "test_d_0";
  EXPECT_TRUE(d.regressions.empty());
  EXPECT_EQ(regressions_total(d), 4);
  EXPECT_EQ(run_summary(r)["regressions"], 4);
  EXPECT_EQ(render_json(r)["differential"]["renumbered_regressions"], 4);
  EXPECT_EQ(fail_on_exit_code(FailOn::kRegressions, r, kExitOk), kExitFailures);
  EXPECT_NE(fail_on_reason(FailOn::kRegressions, r, kExitOk)
                .find("0 failing and at least 4 among renumbered cases"),
            std::string::npos);
  for (const std::string& text : {render_markdown(r), render_html(r)}) {
    EXPECT_EQ(text.find("None: every test"), std::string::npos) << text;
    EXPECT_NE(text.find("renumbered cases hold at least 4 regressions (below)"), std::string::npos)
        << text;
    EXPECT_NE(text.find("At least 4 of them are regressions"), std::string::npos) << text;
  }
}

// Cases the masquerade replaced (tensordict: pytest's [NOTSET] of an empty device list, and
// `cur_device = "cuda" if torch.cuda.is_available() else "cpu"` in a parameter value): a case the
// baseline skipped and the shim run lacks, while it runs other cases of the same test, is not
// lost. One the baseline ran and the shim run replaced one for one is renumbered (below); one of
// a test the shim run lacks is still lost.
TEST_F(LostTests, SkippedCasesTheMasqueradeReplacedAreNotLost) {
  constexpr CaseStatus kPass = CaseStatus::kPassed, kFail = CaseStatus::kFailed,
                       kSkip = CaseStatus::kSkipped;
  const std::int64_t baseline = record_cases("baseline", 0,
                                             {{"test_err[NOTSET]", kSkip},
                                              {"test_pin[cpu:0-td]", kSkip},
                                              {"test_pin[cpu:0-nested]", kSkip},
                                              {"test_cast[cpu:0]", kPass},
                                              {"test_gone[cpu:0]", kSkip},
                                              {"test_sdpa[7b]", kSkip},
                                              {"test_sdpa[40b]", kSkip},
                                              {"test_sdpa[180b]", kSkip}});
  // test_sdpa: the shim run crashed after its first case (litgpt's test_model.py). Every case
  // it has is one of the baseline's: nothing replaced the two it lacks, they did not run.
  const Report r = report(record_cases("shim", baseline,
                                       {{"test_err[device0]", kFail},
                                        {"test_pin[cuda:0-td]", kPass},
                                        {"test_pin[cuda:0-nested]", kFail},
                                        {"test_cast[cuda:0]", kPass},
                                        {"test_sdpa[7b]", kFail}}));
  ASSERT_TRUE(r.differential);
  const ReportDifferential& d = *r.differential;
  ASSERT_EQ(d.lost.size(), 3U) << "test_gone has no case left; test_sdpa's last two never ran";
  EXPECT_EQ(d.lost[0].name, "test_gone[cpu:0]");
  EXPECT_EQ(d.lost[1].name, "test_sdpa[40b]");
  EXPECT_EQ(d.lost[2].name, "test_sdpa[180b]");
  EXPECT_EQ(d.counts.at("renumbered"), 1) << "test_cast[cpu:0] passed, test_cast[cuda:0] passes";
  EXPECT_EQ(d.renumbered_regressions, 0);
  // The cases that replaced them are not the baseline's: new under the shim.
  EXPECT_EQ(d.counts.count("unlocked"), 0U);
  EXPECT_EQ(d.counts.at("new_passed"), 1) << "test_pin[cuda:0-td]";
  EXPECT_EQ(d.counts.at("new_failed"), 2) << "test_err[device0], test_pin[cuda:0-nested]";
  EXPECT_EQ(d.counts.at("broken_both"), 1) << "test_sdpa[7b]";
  EXPECT_EQ(regressions_total(d), 3);
}

// Parameters drawn at random when pytest collects (e3nn's random_irreps(): two collections share
// about half their ids) give each run other cases of a test. Where each side has as many cases
// the other lacks, their values were replaced one for one: renumbered, and the counts prove the
// regressions. Where the shim run has fewer (a file that stopped early), the baseline's are lost.
TEST_F(LostTests, CasesWhoseValuesChangedOneForOneAreComparedByTheirCounts) {
  constexpr CaseStatus kPass = CaseStatus::kPassed, kFail = CaseStatus::kFailed;
  const std::int64_t baseline = record_cases("baseline", 0,
                                             {{"test_tp[1x0e-2x1o]", kPass},
                                              {"test_tp[3x2e-1x1e]", kPass},
                                              {"test_tp[5x0e-5x0e]", kPass},
                                              {"test_norm[4x1o]", kPass},
                                              {"test_norm[2x0e]", kPass},
                                              {"test_norm[5x0e]", kPass},
                                              {"test_lin[7x3o]", kPass},
                                              {"test_lin[1x1e]", kPass},
                                              {"test_mix[irreps0]", kPass},
                                              {"test_mix[irreps1]", kPass},
                                              {"test_mix[2x0e]", kPass}});
  const Report r = report(record_cases("shim", baseline,
                                       {{"test_tp[2x2o-1x0e]", kPass},
                                        {"test_tp[4x1e-3x3o]", kFail},
                                        {"test_tp[5x0e-5x0e]", kPass},
                                        {"test_norm[1x2e]", kPass},
                                        {"test_norm[3x1o]", kPass},
                                        {"test_norm[5x0e]", kPass},
                                        {"test_lin[2x2e]", kPass},
                                        {"test_mix[irreps0]", kPass},
                                        {"test_mix[1x1o]", kPass},
                                        {"test_mix[3x2e]", kPass}}));
  ASSERT_TRUE(r.differential);
  const ReportDifferential& d = *r.differential;
  // tp: 2 replaced, 2 passed before, 1 does not fail now: 1. norm: 2 replaced, all pass: 0.
  // mix: values pytest names by index (an object: irreps1) and values it prints trade places,
  // so its group of indexed names differs in size (2 and 1): still compared as one test, 0.
  EXPECT_EQ(d.counts.at("renumbered"), 6);
  EXPECT_EQ(d.renumbered_failing, 1);
  EXPECT_EQ(d.renumbered_regressions, 1);
  EXPECT_EQ(d.counts.at("compatible"), 3) << "test_tp[5x0e-5x0e], [5x0e] and [irreps0]";
  // lin: 2 cases the shim run lacks for 1 it has: no one-for-one replacement.
  ASSERT_EQ(d.lost.size(), 2U);
  EXPECT_EQ(d.lost[0].name.rfind("test_lin[", 0), 0U);
  EXPECT_EQ(d.lost[1].name.rfind("test_lin[", 0), 0U);
  EXPECT_EQ(d.counts.at("new_passed"), 1) << "test_lin[2x2e]";
  EXPECT_EQ(regressions_total(d), 3);
}

TEST_F(LostTests, TheNextRunNamesThemMissingNotNewAndTheRunThatLostThemCountsThem) {
  const std::int64_t first = record("shim", 0, 0, false);
  const std::int64_t empty = record("shim", 0, first, true);
  const std::int64_t next = record("shim", 0, empty, false, CaseStatus::kFailed);
  // The run that lost b.py's tests: lost since its previous run, counted with the new failures.
  const Report lost = report(empty);
  ASSERT_TRUE(lost.previous);
  ASSERT_EQ(lost.previous->lost.size(), 2U);
  EXPECT_EQ(lost.previous->counts.at("lost"), 2);
  EXPECT_EQ(fail_on_exit_code(FailOn::kNewFailures, lost, kExitOk), kExitFailures);
  EXPECT_EQ(run_summary(lost)["new_failures"], 3) << "2 lost and b.py's (file) failure";
  // The next run: b.py's tests are back. test_three fails, but it is not new: the run before
  // lost it.
  const Report back = report(next);
  ASSERT_TRUE(back.previous);
  EXPECT_EQ(back.previous->counts.at("missing_before"), 2);
  ASSERT_EQ(back.previous->missing_before.size(), 2U);
  for (const auto& c : back.previous->new_failures) EXPECT_NE(c.name, "test_three");
  ASSERT_EQ(back.previous->new_failures.size(), 1U) << "a.py's test_two";
  EXPECT_EQ(back.previous->new_failures[0].name, "test_two");
  const std::string md = render_markdown(back);
  EXPECT_NE(md.find("### Missing from the previous run"), std::string::npos) << md;
}

}  // namespace
}  // namespace devshim
