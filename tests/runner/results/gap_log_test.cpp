#include "runner/results/gap_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "runner/results/differential.h"
#include "runner/results/sqlite.h"
#include "runner/results/store.h"
#include "tests/runner/results/schema_rewind.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::TempDir;

RunRecord run_of(const std::string& mode, std::int64_t baseline_run) {
  RunRecord r;
  r.suite = "accelerate";
  r.suite_file = "/s/suite.json";
  r.framework = "pytest";
  r.command_line = {"runner", "suites/accelerate", "--differential"};
  r.started_at = "2026-11-23T08:00:00Z";
  r.project_root = "/accelerate";
  r.tests_dir = "tests";
  r.out_dir = "/out";
  r.mode = mode;
  r.baseline_run = baseline_run;
  return r;
}

std::string key_of(const std::string& file, const std::string& classname, const std::string& name) {
  return file + "::" + classname + "::" + name;
}

// One run of the fixture stored as the runner stores it: one file record per file, its cases.
std::int64_t store_run(Store& store, const nlohmann::json& cases, const std::string& mode,
                       std::int64_t baseline_run) {
  std::map<std::string, std::vector<TestCase>> by_file;
  for (const auto& c : cases) {
    TestCase t;
    t.classname = c.at("classname").get<std::string>();
    t.name = c.at("name").get<std::string>();
    t.status = *parse_case_status(c.at("status").get<std::string>());
    t.exception = c.at("exception").get<std::string>();
    t.message = c.at("message").get<std::string>();
    t.traceback = c.at("traceback").get<std::string>();
    by_file[c.at("file").get<std::string>()].push_back(std::move(t));
  }
  std::vector<std::string> files;
  for (const auto& [file, _] : by_file) files.push_back(file);
  const std::int64_t id = store.begin_run(run_of(mode, baseline_run), files);
  for (const auto& [file, tests] : by_file) {
    FileRecord rec;
    rec.path = file;
    bool failed = false;
    for (const auto& t : tests) failed = failed || is_failure(t.status);
    rec.status = failed ? FileStatus::kFailed : FileStatus::kPassed;
    rec.parsed_from = "junit";
    store.record_file(id, rec, tests);
  }
  store.finish_run(id, "failed", "2026-11-23T08:10:00Z");
  return id;
}

// A real differential run of huggingface/accelerate's 12 top-level test files under the shim
// (tests/runner/fixtures/accelerate/README.md): every failing or newly skipped test of the shim
// run is evidence of exactly one gap entry, and nothing else is.
TEST(GapLog, EveryFailingOrNewlySkippedTestOfARealRunHasAnEntry) {
  std::ifstream in(std::string(RUNNER_FIXTURES_DIR) + "/accelerate/gap_cases.json");
  ASSERT_TRUE(in) << "missing fixture";
  const nlohmann::json fixture = nlohmann::json::parse(in);
  TempDir dir;
  Store store(dir / "results.db");
  const std::int64_t baseline = store_run(store, fixture.at("baseline"), "baseline", 0);
  const std::int64_t shim = store_run(store, fixture.at("shim"), "shim", baseline);

  std::map<std::string, CaseStatus> before;
  for (const auto& c : fixture.at("baseline")) {
    before[key_of(c.at("file"), c.at("classname"), c.at("name"))] =
        *parse_case_status(c.at("status").get<std::string>());
  }
  std::set<std::string> expected;  // failing or newly skipped under the shim
  std::set<std::string> wants_no_gpu;
  for (const auto& c : fixture.at("shim")) {
    const std::string key = key_of(c.at("file"), c.at("classname"), c.at("name"));
    const CaseStatus status = *parse_case_status(c.at("status").get<std::string>());
    std::optional<CaseStatus> was;
    if (auto it = before.find(key); it != before.end()) was = it->second;
    if (is_failure(status)) expected.insert(key);
    if (diff_class(was, status) == "newly_skipped") {
      expected.insert(key);
      if (skip_wants_no_gpu(c.at("message").get<std::string>())) wants_no_gpu.insert(key);
    }
  }
  ASSERT_FALSE(expected.empty());
  ASSERT_FALSE(wants_no_gpu.empty()) << "the run has @require_cpu tests that skip under the shim";

  GapLog log(store);
  const int apis = log.update_from_run(shim);
  EXPECT_GT(apis, 0);
  std::multiset<std::string> seen;
  std::set<std::string> masquerade;
  for (const GapEntry& e : log.for_run(shim)) {
    EXPECT_FALSE(e.why.empty()) << e.api;
    for (const GapTest& t : e.test_list) {
      const std::string key = key_of(t.file, t.classname, t.name);
      seen.insert(key);
      if (e.kind == "masquerade_skip") masquerade.insert(key);
    }
    if (e.kind == "masquerade_skip") {
      EXPECT_EQ(e.severity, "low") << "an expected effect of the masquerade";
      EXPECT_EQ(e.api.rfind("newly skipped: ", 0), 0U) << e.api;
    }
    if (e.kind == "unattributed") {
      EXPECT_EQ(e.api.rfind("unattributed ", 0), 0U) << e.api;
    }
  }
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), expected);
  EXPECT_EQ(seen.size(), expected.size()) << "each test is evidence of one entry";
  EXPECT_EQ(masquerade, wants_no_gpu);

  // The baseline run itself is no evidence.
  EXPECT_EQ(log.update_from_run(baseline), 0);
}

TEST(AttributeCase, NewlySkippedOnlyAgainstABaselineThatPassed) {
  TestCase skipped;
  skipped.status = CaseStatus::kSkipped;
  skipped.message = "test requires only a CPU";
  EXPECT_FALSE(attribute_case(skipped, /*has_baseline=*/false, std::nullopt));
  EXPECT_FALSE(attribute_case(skipped, true, CaseStatus::kSkipped));
  EXPECT_FALSE(attribute_case(skipped, true, CaseStatus::kFailed));
  auto a = attribute_case(skipped, true, CaseStatus::kPassed);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api, "newly skipped: test requires only a CPU");
  EXPECT_EQ(a->kind, "masquerade_skip");

  skipped.message = "test is slow";
  a = attribute_case(skipped, true, CaseStatus::kPassed);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, "newly_skipped");

  TestCase passed;
  passed.status = CaseStatus::kPassed;
  EXPECT_FALSE(attribute_case(passed, true, CaseStatus::kFailed));
}

TEST(AttributeCase, AFailureNoRuleNamesIsUnattributedByItsNormalizedMessage) {
  TestCase t;
  t.status = CaseStatus::kFailed;
  t.exception = "AssertionError";
  t.message = "assert 3 == 4\nmore lines";
  auto a = attribute_case(t, false, std::nullopt);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, "unattributed");
  EXPECT_EQ(a->api, "unattributed AssertionError: assert <n> == <n>");
  t.exception.clear();
  t.message = std::string(300, 'x');
  a = attribute_case(t, false, std::nullopt);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api, "unattributed failure: " + std::string(100, 'x') + "…");
}

// Migration 9 rebuilds gaps and gap_tests for the new kinds; entries and their evidence stay
// (dropping the old gaps must not cascade into the tests).
TEST(GapLog, MigrationNineKeepsEntriesAndTheirTests) {
  TempDir dir;
  const auto path = dir / "results.db";
  {
    Store store(path);
    const std::int64_t id = store.begin_run(run_of("shim", 0), {"test_a.py"});
    FileRecord rec;
    rec.path = "test_a.py";
    rec.status = FileStatus::kFailed;
    TestCase t;
    t.classname = "T";
    t.name = "test_x";
    t.status = CaseStatus::kFailed;
    t.exception = "AttributeError";
    t.message = "module 'torch._C' has no attribute '_cuda_getDevice'";
    store.record_file(id, rec, {t});
    store.finish_run(id, "failed", "2026-11-23T08:10:00Z");
    GapLog(store).update_from_run(id);
  }
  rewind_to_schema_11(path);
  {
    sql::Database db(path);
    // What migrations 10 and 11 add, added again below.
    db.exec("ALTER TABLE runs DROP COLUMN summary; ALTER TABLE runs DROP COLUMN policy");
    db.exec("PRAGMA user_version = 8");
  }
  Store store(path);  // migrates 8 → 9 (and on) again over the same rows
  auto e = GapLog(store).entry("torch._C._cuda_getDevice");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->tests, 1);
  ASSERT_EQ(e->test_list.size(), 1U);
  EXPECT_EQ(e->test_list[0].name, "test_x");
  GapEdit edit;
  edit.kind = "masquerade_skip";
  GapLog(store).set("newly skipped: x", edit);
  EXPECT_EQ(GapLog(store).entry("newly skipped: x")->kind, "masquerade_skip");
}

}  // namespace
}  // namespace devshim
