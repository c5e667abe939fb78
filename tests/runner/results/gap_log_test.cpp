#include "runner/results/gap_log.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "parsers/gap_attribution.h"
#include "parsers/pytest_junit.h"
#include "runner/results/cuda_branch.h"
#include "runner/results/differential.h"
#include "runner/results/gap_actions.h"
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

// The accelerate fixture's cases (tests/runner/fixtures/accelerate/README.md); null when missing.
nlohmann::json accelerate_fixture() {
  std::ifstream in(std::string(RUNNER_FIXTURES_DIR) + "/accelerate/gap_cases.json");
  return in ? nlohmann::json::parse(in) : nlohmann::json();
}

// One run of the fixture stored as the runner stores it: one file record per file, its cases.
std::int64_t store_run(Store& store, const nlohmann::json& cases, const std::string& mode,
                       std::int64_t baseline_run, const std::vector<std::string>& targets = {}) {
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
  RunRecord run = run_of(mode, baseline_run);
  run.targets = targets;
  const std::int64_t id = store.begin_run(run, files);
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
  const nlohmann::json fixture = accelerate_fixture();
  ASSERT_FALSE(fixture.is_null()) << "missing fixture";
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

// The accelerate run again, then re-runs of a few of its failing tests (FILE::TEST targets):
// an entry keeps the tests a re-run did not run, and drops one only when a run that ran it shows
// it passing.
TEST(GapLog, ATestStaysAffectedUntilARunThatRanItShowsOtherwise) {
  const nlohmann::json fixture = accelerate_fixture();
  ASSERT_FALSE(fixture.is_null()) << "missing fixture";
  TempDir dir;
  Store store(dir / "results.db");
  GapLog log(store);
  const std::int64_t full = store_run(store, fixture.at("shim"), "shim", 0);
  log.update_from_run(full);
  std::optional<GapEntry> widest;
  for (const GapEntry& e : log.for_run(full)) {
    if (!widest || e.tests > widest->tests) widest = e;
  }
  ASSERT_TRUE(widest && widest->tests >= 2) << "an entry with two tests or more";
  const GapTest first = widest->test_list[0], second = widest->test_list[1];
  auto case_of = [&](const GapTest& t) {
    for (const auto& c : fixture.at("shim")) {
      if (c.at("file") == t.file && c.at("classname") == t.classname && c.at("name") == t.name) {
        return c;
      }
    }
    ADD_FAILURE() << t.name;
    return nlohmann::json();
  };
  auto target = [](const GapTest& t) { return t.file + "::" + t.name; };

  // Re-run of the first test alone, still failing: the entry keeps all its tests.
  const std::int64_t one =
      store_run(store, nlohmann::json::array({case_of(first)}), "shim", 0, {target(first)});
  log.update_from_run(one);
  auto e = log.entry(widest->api);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->last_seen_run, one);
  EXPECT_EQ(e->tests, widest->tests);
  int carried = 0;
  for (const GapTest& t : e->test_list) {
    if (t.carried_from == full) ++carried;
  }
  EXPECT_EQ(carried, widest->tests - 1);
  ASSERT_EQ(log.for_run(one).size(), 1U) << "the re-run's own evidence: its one test";
  EXPECT_EQ(log.for_run(one)[0].tests, 1);
  EXPECT_EQ(log.for_run(one)[0].test_list[0].name, first.name);

  // Both re-run: the first fails again, the second passes now. The second stops counting.
  nlohmann::json passing = case_of(second);
  passing["status"] = "passed";
  const std::int64_t two = store_run(store, nlohmann::json::array({case_of(first), passing}),
                                     "shim", 0, {target(first), target(second)});
  log.update_from_run(two);
  e = log.entry(widest->api);
  EXPECT_EQ(e->tests, widest->tests - 1);
  for (const GapTest& t : e->test_list) {
    EXPECT_FALSE(t.name == second.name && t.file == second.file) << "shown passing in run two";
    if (t.name != first.name) {
      EXPECT_EQ(t.carried_from, full) << t.name;
    }
  }

  // A run of the first run's targets is the whole evidence again: nothing carried.
  const std::int64_t again = store_run(store, fixture.at("shim"), "shim", 0);
  log.update_from_run(again);
  e = log.entry(widest->api);
  EXPECT_EQ(e->tests, widest->tests);
  for (const GapTest& t : e->test_list) EXPECT_EQ(t.carried_from, 0) << t.name;
}

// What a person set by hand (`runner gaps set`) outlives the runs: ten more shim runs, the
// entry's failure alternately absent and present, neither fix, reopen nor rewrite it.
TEST(GapLog, AHandSetStatusAndSeveritySurviveTenRuns) {
  const nlohmann::json fixture = accelerate_fixture();
  ASSERT_FALSE(fixture.is_null()) << "missing fixture";
  TempDir dir;
  Store store(dir / "results.db");
  GapLog log(store);
  const std::int64_t first = store_run(store, fixture.at("shim"), "shim", 0);
  log.update_from_run(first);
  std::optional<GapEntry> picked;
  for (const GapEntry& e : log.for_run(first)) {
    if (e.kind == "failing" && !e.test_list.empty()) picked = e;
  }
  ASSERT_TRUE(picked) << "the fixture's shim run has a failing API";
  GapEdit edit;
  edit.status = "wontfix";
  edit.severity = "high";
  edit.action = "document it";
  edit.note = "needs a CUDA build";
  edit.suite = picked->suite;
  log.set(picked->api, edit);

  // The same run with the entry's tests passing: its failure absent.
  std::set<std::string> affected;
  for (const GapTest& t : picked->test_list) affected.insert(key_of(t.file, t.classname, t.name));
  nlohmann::json without = fixture.at("shim");
  for (auto& c : without) {
    if (affected.count(key_of(c.at("file"), c.at("classname"), c.at("name"))) == 0) continue;
    c["status"] = "passed";
    c["exception"] = c["message"] = c["traceback"] = "";
  }
  std::int64_t last = first;
  for (int i = 0; i < 10; ++i) {
    last = store_run(store, i % 2 == 0 ? without : fixture.at("shim"), "shim", 0);
    log.update_from_run(last);
  }
  const std::optional<GapEntry> e = log.entry(picked->api, picked->suite);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, "wontfix");
  EXPECT_TRUE(e->status_by_person);
  EXPECT_EQ(e->severity, "high");
  EXPECT_EQ(e->action, "document it");
  EXPECT_EQ(e->note, "needs a CUDA build");
  EXPECT_EQ(e->last_seen_run, last) << "runs 1, 3, 5, ..., 11 showed it";
}

// A newer devshim's rules may attribute a failure that an older one left unattributed. The old
// entry is then neither "fixed" (its test still fails, the same way) nor open: it is dropped,
// unless a person wrote on it. A test that fails differently now got past it: that is a fix.
TEST(GapLog, AnEntryWhoseFailureMovedToAnotherIsDroppedNotFixed) {
  // torchmetrics' real failure (tests/parsers/fixtures/gaps/issue32/README.md), which the rules
  // of devshim @88e23a6 left unattributed and those of @2ff9eb8 call a device type check.
  std::ifstream tb_in(std::string(PARSER_FIXTURES_DIR) +
                      "/gaps/issue32/torchmetrics-keep-test_safe_divide.txt");
  ASSERT_TRUE(tb_in) << "missing fixture";
  std::ostringstream tb;
  tb << tb_in.rdbuf();
  const nlohmann::json failing = {{"file", "utilities/test_utilities.py"},
                                  {"classname", "unittests.utilities.test_utilities"},
                                  {"name", "test_safe_divide"},
                                  {"status", "failed"},
                                  {"exception", "AssertionError"},
                                  {"message", "Result not on correct device: cpu"},
                                  {"traceback", tb.str()}};
  const std::string old_api = "unattributed AssertionError: Result not on correct device: cpu";
  TempDir dir;
  Store store(dir / "results.db");
  GapLog log(store);
  // What the older rules recorded: the run's evidence under an unattributed entry.
  auto record_with_old_rules = [&](const nlohmann::json& c, const std::string& note) {
    const std::int64_t run = store_run(store, nlohmann::json::array({c}), "shim", 0);
    log.update_from_run(run);
    store.database().exec(fmt::format(
        "INSERT INTO gaps (suite, api, kind, why, first_seen_run, last_seen_run, first_seen_at, "
        "last_seen_at, updated_at, note) VALUES ((SELECT suite FROM runs WHERE id = {1}), '{0}', "
        "'unattributed', 'no rule', {1}, {1}, 't', 't', 't', {2}); UPDATE gap_tests SET api = "
        "'{0}' WHERE run_id = {1}; DELETE FROM gaps WHERE api = '{3}'",
        old_api, run, note.empty() ? "NULL" : "'" + note + "'", kGapDeviceType));
    ASSERT_TRUE(log.entry(old_api));
  };
  record_with_old_rules(failing, "");
  const std::int64_t same = store_run(store, nlohmann::json::array({failing}), "shim", 0);
  log.update_from_run(same);
  EXPECT_FALSE(log.entry(old_api)) << "the same failure, attributed elsewhere now";
  ASSERT_TRUE(log.entry(std::string(kGapDeviceType)));
  EXPECT_EQ(log.entry(std::string(kGapDeviceType))->status, "open");

  // A person's note keeps it, open, for the person to decide.
  record_with_old_rules(failing, "looked at: the test checks the type");
  log.update_from_run(store_run(store, nlohmann::json::array({failing}), "shim", 0));
  ASSERT_TRUE(log.entry(old_api));
  EXPECT_EQ(log.entry(old_api)->status, "open");
  store.database().exec(fmt::format("DELETE FROM gaps WHERE api = '{}'", old_api));

  // The test fails at another assertion now: the old failure is gone, the entry fixed.
  record_with_old_rules(failing, "");
  nlohmann::json later = failing;
  later["message"] = "assert 'cpu' == 'cuda'";
  later["traceback"] = "E       assert 'cpu' == 'cuda'\n";
  const std::int64_t differs = store_run(store, nlohmann::json::array({later}), "shim", 0);
  log.update_from_run(differs);
  ASSERT_TRUE(log.entry(old_api));
  EXPECT_EQ(log.entry(old_api)->status, "fixed");
  EXPECT_EQ(log.entry(old_api)->fixed_in_run, differs);
}

// A test whose child process failed is attributed by the child's failure: pyro's example that
// needs torchvision (tests/parsers/fixtures/gaps/issue32/README.md).
TEST(AttributeCase, AFailedChildProcessIsAttributedByItsOwnFailure) {
  const std::string dir = std::string(PARSER_FIXTURES_DIR) + "/gaps/issue32/";
  const ParsedFile p = parse_pytest_results(dir + "pyro-keep-test_examples-child.xml",
                                            dir + "pyro-keep-test_examples-child.log");
  const TestCase* failed = nullptr;
  for (const TestCase& c : p.cases) failed = c.status == CaseStatus::kFailed ? &c : failed;
  ASSERT_TRUE(failed);
  auto a = attribute_case(*failed, true, CaseStatus::kSkipped);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api,
            "unattributed ModuleNotFoundError in a child process: No module named "
            "'torchvision'");
  EXPECT_EQ(a->kind, "unattributed");
  // A child that failed inside torch: its deepest torch frame, as for the test's own failure.
  TestCase in_torch = *failed;
  in_torch.traceback = std::string(kChildTracebackHeader) +
                       "\nTraceback (most recent call last):\n"
                       "  File \"/w/examples/x.py\", line 3, in <module>\n"
                       "    torch.cuda.get_device_properties(0)\n"
                       "  File \"/v/torch/cuda/__init__.py\", line 9, in get_device_properties\n"
                       "    raise RuntimeError(\"boom\")\n"
                       "RuntimeError: boom\n";
  a = attribute_case(in_torch, true, CaseStatus::kSkipped);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api, "torch.cuda.get_device_properties");
  EXPECT_EQ(a->why.rfind("in its child process", 0), 0U) << a->why;
}

std::string fixture_text(const std::string& path) {
  std::ifstream in(std::string(PARSER_FIXTURES_DIR) + "/" + path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A failing test of issue 32's real failures (tests/parsers/fixtures/gaps/issue32/), with the
// traceback the runner stored.
TestCase issue32_failure(std::string exception, std::string message, const std::string& fixture) {
  TestCase test;
  test.status = CaseStatus::kFailed;
  test.exception = std::move(exception);
  test.message = std::move(message);
  test.traceback = fixture_text("gaps/issue32/" + fixture);
  return test;
}

// A checkout's test file with the real lines of a statement fixture at 1-based `line`, then
// `after`.
void write_statement(const std::filesystem::path& file, int line, const std::string& fixture,
                     const std::string& after = "") {
  testing::write_file(file, std::string(static_cast<std::size_t>(line - 1), '\n') +
                                fixture_text("gaps/issue32/" + fixture) + after);
}

TEST(AttributeCase, AStatementTheLogCutShortIsReadFromTheProjectsSource) {
  // mmengine's test_to_device under redirect: pytest printed `self.assertTrue(` alone.
  TestCase test = issue32_failure("AssertionError", "False is not true",
                                  "mmengine-redirect-test_to_device_2_cuda.txt");
  ASSERT_NE(test.traceback.find("test_base_model.py:178: in test_to_device"), std::string::npos);

  // The checkout: the statement's real lines at the frame's line of the frame's file.
  TempDir root;
  write_statement(root / "tests/test_model/test_base_model/test_base_model.py", 178,
                  "mmengine-redirect-test_to_device_2_cuda.statement.txt");

  std::map<std::string, std::string> sources;
  const std::string read = statement_in_source(test, root.path(), sources);
  EXPECT_EQ(read.rfind("self.assertTrue( all(p.device.type == torch.device(device).type", 0), 0U)
      << read;
  auto a = attribute_case(test, true, CaseStatus::kSkipped, read);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api, kGapDeviceType);
  EXPECT_EQ(sources.size(), 1U);

  // Without the source (another checkout, a deleted file) it stays as the log says.
  std::map<std::string, std::string> none;
  EXPECT_EQ(statement_in_source(test, root / "elsewhere", none), "");
  a = attribute_case(test, true, CaseStatus::kSkipped, "");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api, "unattributed AssertionError: False is not true");
  // A test that passed reads nothing.
  test.status = CaseStatus::kPassed;
  EXPECT_EQ(statement_in_source(test, root.path(), sources), "");
}

TEST(AttributeCase, TheBlockOfAnExpectationIsReadFromTheProjectsSource) {
  // Kymatio's test_cdgmm_exceptions under redirect: pytest printed the `with pytest.raises(...)`
  // line, and the `.cuda()` call is in the block below it.
  const TestCase test =
      issue32_failure("Failed", "DID NOT RAISE TypeError",
                      "kymatio-redirect-test_cdgmm_exceptions_TorchBackend2D.txt");
  TempDir root;
  write_statement(root / "tests/scattering2d/test_torch_backend_2d.py", 241,
                  "kymatio-redirect-test_cdgmm_exceptions_TorchBackend2D.statement.txt",
                  "            assert 'must be on gpu' in exc.value.args[0].lower()\n");

  std::map<std::string, std::string> sources;
  const std::string read = statement_in_source(test, root.path(), sources);
  EXPECT_EQ(read,
            "with pytest.raises(TypeError) as exc: backend.cdgmm(torch.empty(3, 4, 5, 2), "
            "torch.empty(4, 5, 1).cuda())");
  auto a = attribute_case(test, true, CaseStatus::kPassed, read);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api, kGapCudaOnlyError);
  // The line the log printed alone names nothing.
  a = attribute_case(test, true, CaseStatus::kPassed, "");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api, "unattributed Failed: DID NOT RAISE TypeError");
}

// gpytorch's `if torch.cuda.is_available():` around a test body, torcheval's CUDA check after its
// CPU one (whose call leaves out an argument the CPU one passes): code that runs only where CUDA
// is, which the run without the shim never ran. The failure names no torch API; its entry says
// where its branch is, so that a reader tries it on a GPU before blaming the shim.
TEST(AttributeCase, AnUnattributedFailureInACudaOnlyBranchSaysSo) {
  const auto expected = nlohmann::json::parse(fixture_text("gaps/issue32/expected.json"));
  int seen = 0;
  for (const auto& e : expected) {
    if (!e.contains("function")) continue;
    ++seen;
    SCOPED_TRACE(e["test"].get<std::string>());
    TestCase test =
        issue32_failure(e["exception"].get<std::string>(), e["message"].get<std::string>(),
                        e["traceback"].get<std::string>());
    // The checkout: the function's real lines where they are in the real file.
    const std::string at = e["function_at"].get<std::string>();
    const std::string file = at.substr(0, at.rfind(':'));
    const int line = std::stoi(at.substr(at.rfind(':') + 1));
    TempDir root;
    write_statement(root / file, line, e["function"].get<std::string>());

    std::map<std::string, std::string> sources;
    const std::string branch = cuda_branch_in_source(test, root.path(), sources);
    ASSERT_EQ(branch.rfind(file + ":", 0), 0U) << branch;
    const int if_line = std::stoi(branch.substr(file.size() + 1));
    const std::string source = fixture_text("gaps/issue32/" + e["function"].get<std::string>());
    EXPECT_NE(source.find("if torch.cuda.is_available():"), std::string::npos);
    EXPECT_GT(if_line, line);

    auto a = attribute_case(test, true, CaseStatus::kPassed, "", branch);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->kind, kGapUnattributed);
    // gpytorch's prior read for a `concentration` it lacks is an error its own code raises on any
    // device: an entry of its own, whose action is not the shim's.
    const bool own = is_own_error(test.exception, test.message);
    const std::string prefix =
        own ? std::string(kOwnErrorInCudaBranch) + ": " + e["exception"].get<std::string>() + ": "
            : "unattributed " + e["exception"].get<std::string>() + std::string(kInCudaBranch) +
                  ": ";
    EXPECT_EQ(a->api.rfind(prefix, 0), 0U) << a->api;
    EXPECT_NE(a->why.find(branch), std::string::npos) << a->why;
    const GapAction action = gap_action(kGapUnattributed, a->api, "", ShimSettings{});
    EXPECT_EQ(action.action.rfind(own ? "not the shim's" : "run the test where CUDA is", 0), 0U)
        << action.action;

    // Another checkout (the file gone): the plain unattributed entry.
    std::map<std::string, std::string> none;
    EXPECT_EQ(cuda_branch_in_source(test, root / "elsewhere", none), "");
    a = attribute_case(test, true, CaseStatus::kPassed, "", "");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->api.find(kInCudaBranch), std::string::npos) << a->api;
    // A test that passed reads nothing.
    test.status = CaseStatus::kPassed;
    EXPECT_EQ(cuda_branch_in_source(test, root.path(), sources), "");
  }
  EXPECT_EQ(seen, 2);
}

// torch's process launchers put the child's traceback in their own exception's message:
// torchelastic's ChildFailedError (torcheval's collection sync test, whose input is too small for
// one process) and mp.spawn's ProcessRaisedException (a purpose-made test under the runner). The
// entry is the child's failure, not the launcher frame that raised the parent's.
TEST(AttributeCase, AProcessTorchLaunchedIsAttributedByItsOwnFailure) {
  for (const auto& [exception, fixture, api] :
       {std::tuple{"torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
                   "torcheval-keep-test_metric_collection_sync.txt",
                   "unattributed IndexError in a child process: index <n> is out of bounds for "
                   "dimension <n> with size <n>"},
        std::tuple{"torch.multiprocessing.spawn.ProcessRaisedException",
                   "spawn-shim-test_each_rank_gets_three_rows.txt",
                   "unattributed AssertionError in a child process: rank <n> got <n> rows"}}) {
    SCOPED_TRACE(fixture);
    const TestCase test = issue32_failure(exception, "", fixture);
    const auto child = child_failure(test.exception, test.traceback);
    ASSERT_TRUE(child);
    EXPECT_EQ(child->traceback.rfind("Traceback (most recent call last):\n  File \"", 0), 0U)
        << child->traceback;
    // The parent's own frames end in the launcher, which the child's failure is not.
    EXPECT_TRUE(attribute_failure(test.exception, test.message, test.traceback));
    const auto a = attribute_case(test, true, CaseStatus::kPassed);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->api, api) << a->why;
    EXPECT_EQ(a->kind, kGapUnattributed);
  }
  // Without a traceback in its message: the launcher's failure as it is.
  EXPECT_FALSE(child_failure("torch.multiprocessing.spawn.ProcessRaisedException",
                             "E   torch.multiprocessing.spawn.ProcessRaisedException: \n"));
}

// sbi marks its tests that mix a CPU prior with training on the GPU xfail (strict), and under the
// shim they pass (a real failure captured from sbi's run: its message is the whole of it). A
// strict xfail whose parameters name no two devices is what CUDA alone fails.
TEST(AttributeCase, AStrictXfailThatPassesIsNamedByWhatItsParametersMix) {
  TestCase test = issue32_failure("", "[XPASS(strict)]",
                                  "sbi-shim-test_boxuniform_device_handling_cpu-gpu.txt");
  test.name = "test_boxuniform_device_handling[cpu-gpu]";
  auto a = attribute_case(test, true, CaseStatus::kSkipped);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api, kGapCrossDevice) << a->why;
  EXPECT_EQ(a->kind, kGapFailing);
  EXPECT_NE(a->why.find("parameters name the CPU and a GPU"), std::string::npos) << a->why;
  for (std::string_view name : {"test_known_cuda_bug", "test_half[cuda-float16]",
                                "test_cpu_only_ops[cpu]", "test_gpus[gpu-2]"}) {
    SCOPED_TRACE(name);
    test.name = name;
    a = attribute_case(test, true, CaseStatus::kPassed);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->api, kGapStrictXpass) << a->why;
  }
  const GapAction action = gap_action(kGapFailing, kGapStrictXpass, "", ShimSettings{});
  EXPECT_EQ(action.action.rfind("none for the shim: the test is marked to fail", 0), 0U)
      << action.action;
}

// Severity follows how many tests an entry holds, but an entry no change of the shim can fix
// (here sbi's real strict xfails that mix a CPU prior and a GPU: they expect what one device
// cannot show) stays at medium however many, below a device-type check of as many tests.
// Severities follow what a porter can do: an entry beyond the shim (a port another test held) is
// at most medium however many tests it holds; the tests' own checks (a tensor's device type, an
// error expected from tensors on two devices) are low.
TEST(GapLog, AnEntryBeyondTheShimIsAtMostMediumAndTheTestsOwnLow) {
  const std::string xpass =
      fixture_text("gaps/issue32/sbi-shim-test_boxuniform_device_handling_cpu-gpu.txt");
  nlohmann::json cases = nlohmann::json::array();
  for (int i = 0; i < 25; ++i) {
    cases.push_back({{"file", "test_devices.py"},
                     {"classname", "tests.test_devices"},
                     {"name", fmt::format("test_mixed[cpu-gpu-{}]", i)},
                     {"status", "failed"},
                     {"exception", ""},
                     {"message", "[XPASS(strict)]"},
                     {"traceback", xpass}});
    cases.push_back({{"file", "test_types.py"},
                     {"classname", "tests.test_types"},
                     {"name", fmt::format("test_type[{}]", i)},
                     {"status", "failed"},
                     {"exception", "AssertionError"},
                     {"message", "assert 'cpu' == 'cuda'"},
                     {"traceback", "E       assert 'cpu' == 'cuda'\n"}});
    cases.push_back({{"file", "test_ports.py"},
                     {"classname", "tests.test_ports"},
                     {"name", fmt::format("test_bind[{}]", i)},
                     {"status", "failed"},
                     {"exception", "RuntimeError"},
                     {"message",
                      "The server socket has failed to listen on any local network "
                      "address. port: 29500, useIpv6: false, code: -98, name: "
                      "EADDRINUSE, message: address already in use"},
                     {"traceback", ""}});
  }
  TempDir dir;
  Store store(dir / "results.db");
  GapLog log(store);
  log.update_from_run(store_run(store, cases, "shim", 0));
  const auto cross = log.entry(std::string(kGapCrossDevice));
  const auto type = log.entry(std::string(kGapDeviceType));
  ASSERT_TRUE(cross && type);
  const auto port = log.entry(std::string(kGapPortInUse));
  ASSERT_TRUE(port);
  EXPECT_EQ(cross->tests, 25);
  EXPECT_EQ(cross->severity, "low");
  EXPECT_EQ(type->tests, 25);
  EXPECT_EQ(type->severity, "low");
  EXPECT_EQ(port->tests, 25);
  EXPECT_EQ(port->severity, "medium");
  EXPECT_TRUE(gap_action(kGapFailing, kGapCrossDevice, "", ShimSettings{}).beyond_the_shim);
  EXPECT_FALSE(gap_action(kGapFailing, kGapDeviceType, "", ShimSettings{}).beyond_the_shim);
  EXPECT_TRUE(gap_tests_own(kGapFailing, kGapDeviceType));
  EXPECT_FALSE(gap_tests_own(kGapFailing, kGapPortInUse));
  EXPECT_FALSE(gap_tests_own(kGapFailing, kGapDeviceIdentity)) << "a setting changes it";
}

// diffusers (docs/shim.md, "A thirty-first"): 40 tests that need the hub fail without the shim and
// with it alike, with the same failure: no evidence of a gap (they were the log's first entry,
// "critical"). A test that failed otherwise without the shim (for want of CUDA) and one the
// baseline skipped stay evidence.
TEST(GapLog, ATestThatFailsAsItDidWithoutTheShimIsNoEvidence) {
  const std::string hub =
      "We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them "
      "in the cached files.";
  auto failing = [](const std::string& name, const std::string& exception,
                    const std::string& message) {
    return nlohmann::json{{"file", "lora/test_lora_layers_sd.py"},
                          {"classname", "tests.lora.test_lora_layers_sd.StableDiffusionLoRATests"},
                          {"name", name},
                          {"status", "failed"},
                          {"exception", exception},
                          {"message", message},
                          {"traceback", "E       " + exception + ": " + message + "\n"}};
  };
  nlohmann::json before = nlohmann::json::array();
  nlohmann::json after = nlohmann::json::array();
  for (int i = 0; i < 25; ++i) {
    const std::string name = fmt::format("test_simple_inference_{}", i);
    before.push_back(failing(name, "OSError", hub));
    after.push_back(failing(name, "OSError", hub));
  }
  before.push_back(
      failing("test_to_device", "AssertionError", "Torch not compiled with CUDA enabled"));
  after.push_back(failing("test_to_device", "AssertionError", "False is not true"));
  nlohmann::json skipped = failing("test_group_offloading_inference", "", "");
  skipped["status"] = "skipped";
  skipped["message"] = "test requires accelerator+PyTorch";
  before.push_back(skipped);
  after.push_back(failing("test_group_offloading_inference", "OSError", hub));

  TempDir dir;
  Store store(dir / "results.db");
  const std::int64_t baseline = store_run(store, before, "baseline", 0);
  GapLog log(store);
  log.update_from_run(store_run(store, after, "shim", baseline));
  std::set<std::string> evidence;
  int hub_tests = -1;
  for (const GapEntry& e : log.for_run(baseline + 1)) {
    for (const GapTest& t : e.test_list) evidence.insert(t.name);
    if (e.api == kGapNetworkUnreachable) hub_tests = e.tests;
  }
  EXPECT_EQ(evidence, (std::set<std::string>{"test_to_device", "test_group_offloading_inference"}));
  EXPECT_EQ(hub_tests, 1) << "only the test the baseline skipped";
}

// A named gap has its own action: none of them is a torch function to carry.
TEST(GapAction, NamedGapsAreNotFunctionsToCarry) {
  for (std::string_view gap :
       {kGapDeviceType, kGapCrossDevice, kGapCudaOnlyError, kGapCudaExtension, kGapStrictXpass}) {
    SCOPED_TRACE(gap);
    const GapAction a = gap_action(kGapFailing, gap, "", ShimSettings{});
    EXPECT_EQ(a.action.find("carry "), std::string::npos) << a.action;
    EXPECT_EQ(a.action.rfind("no", 0), 0U) << a.action;  // "no shim setting", "none on cpu"
  }
  EXPECT_NE(gap_action(kGapFailing, kGapCudaExtension, "", ShimSettings{})
                .action.find("torch.utils.cpp_extension"),
            std::string::npos);
}

// A test that ended pytest's session itself (pytorch_memlab's raises KeyboardInterrupt on
// purpose): not the shim's, and it says that the file's later tests did not run.
TEST(GapAction, ATestThatEndedTheSessionIsNotTheShims) {
  for (const char* api : {"unattributed KeyboardInterrupt: ended the test session in this test",
                          "unattributed _pytest.outcomes.Exit: no device left to test on"}) {
    const GapAction a = gap_action(kGapUnattributed, api, "", ShimSettings{});
    EXPECT_TRUE(a.beyond_the_shim) << api;
    EXPECT_EQ(a.action.rfind("not the shim's", 0), 0U) << a.action;
    EXPECT_NE(a.action.find("did not run"), std::string::npos) << a.action;
    EXPECT_TRUE(a.setting.empty()) << a.setting;
  }
}

// Two files that bind one port, run at once: the run's doing, fixed by a suite lock.
TEST(GapAction, APortInUseNamesTheSuitesLocks) {
  const GapAction a = gap_action(kGapFailing, kGapPortInUse, "", ShimSettings{});
  EXPECT_EQ(a.action.rfind("not the shim's", 0), 0U) << a.action;
  EXPECT_NE(a.action.find("locks (docs/suites.md"), std::string::npos) << a.action;
  EXPECT_EQ(a.action.find("carry "), std::string::npos) << a.action;
}

// A test that could not reach the hub never got to the device: not the shim's, and no setting
// to try (an unattributed failure would send the reader to another device-object setting).
TEST(GapAction, TheNetworkOutOfReachIsNotTheShims) {
  ShimSettings redirect;
  redirect.values["TORCHDEVICE_DEVICE_OBJECTS"] = "redirect";
  const GapAction a = gap_action(kGapFailing, kGapNetworkUnreachable, "", redirect);
  EXPECT_EQ(a.action.rfind("not the shim's", 0), 0U) << a.action;
  EXPECT_NE(a.action.find("HF_HUB_OFFLINE"), std::string::npos) << a.action;
  EXPECT_TRUE(a.setting.empty()) << a.setting;
  EXPECT_TRUE(a.beyond_the_shim);
  EXPECT_TRUE(gap_beyond_the_shim(kGapFailing, kGapNetworkUnreachable));
}

// Code that refuses the CPU device torch.device("cuda", 0) is under redirect (the default) is
// told to set keep, which --try-settings can try; under keep that is no answer.
TEST(GapAction, ARefusedCudaDeviceObjectNamesKeep) {
  ShimSettings redirect;
  redirect.values["TORCHDEVICE_DEVICE_OBJECTS"] = "redirect";
  GapAction a = gap_action(kGapFailing, kGapCudaDeviceRefused, "", redirect);
  EXPECT_EQ(a.setting, "TORCHDEVICE_DEVICE_OBJECTS=keep");
  EXPECT_EQ(a.action.rfind("set TORCHDEVICE_DEVICE_OBJECTS=keep", 0), 0U) << a.action;
  ShimSettings keep;
  keep.values["TORCHDEVICE_DEVICE_OBJECTS"] = "keep";
  keep.device = "cpu";
  a = gap_action(kGapFailing, kGapCudaDeviceRefused, "", keep);
  EXPECT_TRUE(a.setting.empty());
  EXPECT_NE(a.action.find("no setting changes"), std::string::npos) << a.action;
}

// A failure that names nothing may read a device object's index or type, which the two
// device-object settings answer otherwise (captum's `_sort_key_list` test sorts
// torch.device("cuda:0") by its index): the other setting is suggested, for --try-settings to
// try; nothing when the run does not say which it used, and never for a missing module or a
// lost test.
TEST(GapAction, AnUnattributedFailureNamesTheOtherDeviceObjectSetting) {
  const std::string api = "unattributed AssertionError: Given Device ID List does not match";
  ShimSettings redirect;
  redirect.values["TORCHDEVICE_DEVICE_OBJECTS"] = "redirect";
  GapAction a = gap_action(kGapUnattributed, api, "", redirect);
  EXPECT_EQ(a.setting, "TORCHDEVICE_DEVICE_OBJECTS=keep");
  EXPECT_NE(a.action.find("TORCHDEVICE_DEVICE_OBJECTS=keep, another device-object setting"),
            std::string::npos)
      << a.action;
  ShimSettings keep;
  keep.values["TORCHDEVICE_DEVICE_OBJECTS"] = "keep";
  EXPECT_EQ(gap_action(kGapUnattributed, api, "", keep).setting,
            "TORCHDEVICE_DEVICE_OBJECTS=redirect");
  ShimSettings indexed;
  indexed.values["TORCHDEVICE_DEVICE_OBJECTS"] = "redirect-indexed";
  EXPECT_EQ(gap_action(kGapUnattributed, api, "", indexed).setting,
            "TORCHDEVICE_DEVICE_OBJECTS=keep");
  a = gap_action(kGapUnattributed, api, "", ShimSettings{});
  EXPECT_TRUE(a.setting.empty());
  EXPECT_EQ(a.action.rfind("read the failure", 0), 0U) << a.action;
  EXPECT_EQ(a.action.find("--try-settings"), std::string::npos) << a.action;
  for (std::string_view other :
       {"unattributed ModuleNotFoundError in a child process: No module named 'torchvision'",
        "unattributed ImportError: To set CPU affinity on CUDA GPUs the nvidia-ml-py package",
        "lost: its file ran without reporting it"}) {
    SCOPED_TRACE(other);
    a = gap_action(kGapUnattributed, other, "", redirect);
    EXPECT_TRUE(a.setting.empty());
    EXPECT_EQ(a.action.rfind("read the failure", 0), 0U) << a.action;
  }
}

// In a CUDA-only branch, an error the test's own code raises on any device and a numeric
// difference have entries of their own, whose actions name no setting (none changes them); the
// test's own is low. The shim's record of device work marks the branch where no condition is
// found in the source.
TEST(AttributeCase, AnOwnErrorOrANumericDifferenceInACudaBranchNamesNoSetting) {
  TestCase test;
  test.status = CaseStatus::kFailed;
  test.exception = "AttributeError";
  test.message = "'HalfCauchy' object has no attribute 'cuda'";
  auto a = attribute_case(test, true, CaseStatus::kPassed, "", "tests/test_branches.py:24");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api,
            "test's own error in a CUDA-only branch: AttributeError: 'HalfCauchy' object has no "
            "attribute 'cuda'")
      << a->api;
  EXPECT_NE(a->why.find("the condition at tests/test_branches.py:24"), std::string::npos) << a->why;
  ShimSettings redirect;
  redirect.values["TORCHDEVICE_DEVICE_OBJECTS"] = "redirect";
  GapAction action = gap_action(kGapUnattributed, a->api, "", redirect);
  EXPECT_TRUE(action.setting.empty()) << action.setting;
  EXPECT_EQ(action.action.rfind("not the shim's", 0), 0U) << action.action;
  EXPECT_TRUE(gap_tests_own(kGapUnattributed, a->api));

  test.exception = "AssertionError";
  test.message = "Tensor-likes are not close!";
  a = attribute_case(test, true, CaseStatus::kPassed, "", kRecordedCudaBranch);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api.rfind(std::string(kNumericInCudaBranch) + ": ", 0), 0U) << a->api;
  EXPECT_NE(a->why.find("the shim's record says"), std::string::npos) << a->why;
  action = gap_action(kGapUnattributed, a->api, "", redirect);
  EXPECT_TRUE(action.setting.empty()) << action.setting;
  EXPECT_FALSE(gap_tests_own(kGapUnattributed, a->api));

  // Any other unattributed failure there still suggests the other device-object setting.
  test.message = "assert False";
  a = attribute_case(test, true, CaseStatus::kPassed, "", kRecordedCudaBranch);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->api, "unattributed AssertionError in a CUDA-only branch: assert False");
  EXPECT_EQ(gap_action(kGapUnattributed, a->api, "", redirect).setting,
            "TORCHDEVICE_DEVICE_OBJECTS=keep");
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
// A shim run of suite whose one test, in file, fails for want of torch._C._cuda_getDevice; the
// gap log updated from it. Returns the run's id.
std::int64_t record_get_device_failure(Store& store, const std::string& suite,
                                       const std::string& file) {
  RunRecord run = run_of("shim", 0);
  run.suite = suite;
  const std::int64_t id = store.begin_run(run, {file});
  FileRecord rec;
  rec.path = file;
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
  return id;
}

TEST(GapLog, MigrationNineKeepsEntriesAndTheirTests) {
  TempDir dir;
  const auto path = dir / "results.db";
  {
    Store store(path);
    record_get_device_failure(store, "accelerate", "test_a.py");
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

// Issue 60: before schema 16 an entry was one for every suite, its tests of each suite's runs
// side by side. Migration 16 gives each suite its own entry with that suite's runs and tests; the
// copy of a suite whose sighting was not the latest is open again (the other suite's run had
// marked it fixed), and an entry with no test (a person's) belongs to no suite.
TEST(GapLog, MigrationSixteenSplitsAnEntryBySuite) {
  TempDir dir;
  const auto path = dir / "results.db";
  const std::string api = "torch._C._cuda_getDevice";
  std::int64_t alpha = 0, beta = 0;
  {
    Store store(path);
    alpha = record_get_device_failure(store, "alpha", "test_a.py");
    beta = record_get_device_failure(store, "beta", "test_b.py");
  }
  {
    // The tables as schema 15 had them: one entry per API, first seen in alpha's run, last in
    // beta's, which a later run of beta marked fixed; a person's note on it.
    sql::Database db(path);
    db.exec(fmt::format(R"sql(
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE gaps_v15 (
  api TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'open',
  status_by TEXT NOT NULL DEFAULT 'auto', severity TEXT NOT NULL DEFAULT 'low',
  severity_by TEXT NOT NULL DEFAULT 'auto', equivalent TEXT, action TEXT, note TEXT, why TEXT,
  first_seen_run INTEGER, last_seen_run INTEGER, fixed_in_run INTEGER, first_seen_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL, updated_at TEXT NOT NULL, action_by TEXT NOT NULL DEFAULT 'auto',
  equivalent_by TEXT NOT NULL DEFAULT 'auto', setting TEXT, trial_setting TEXT, trial_run INTEGER,
  trial_tests INTEGER, trial_passed INTEGER);
INSERT INTO gaps_v15 SELECT api, kind, 'fixed', status_by, severity, severity_by, equivalent,
  action, 'looked at', why, MIN(first_seen_run), MAX(last_seen_run), {1}, MIN(first_seen_at),
  MAX(last_seen_at), MAX(updated_at), action_by, equivalent_by, setting, NULL, NULL, NULL, NULL
  FROM gaps WHERE api = '{0}' GROUP BY api;
INSERT INTO gaps_v15 (api, kind, note, first_seen_at, last_seen_at, updated_at)
  VALUES ('torch.cuda.by_hand', 'failing', 'by hand', 't', 't', 't');
CREATE TABLE gap_tests_v15 (
  id INTEGER PRIMARY KEY, api TEXT NOT NULL REFERENCES gaps_v15(api) ON DELETE CASCADE,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, file TEXT NOT NULL,
  classname TEXT NOT NULL, name TEXT NOT NULL, carried_from INTEGER,
  UNIQUE (api, run_id, file, classname, name));
INSERT INTO gap_tests_v15 SELECT id, api, run_id, file, classname, name, carried_from
  FROM gap_tests WHERE api = '{0}';
DROP TABLE gap_tests;
DROP TABLE gaps;
ALTER TABLE gaps_v15 RENAME TO gaps;
ALTER TABLE gap_tests_v15 RENAME TO gap_tests;
CREATE INDEX gap_tests_by_run ON gap_tests(run_id, api);
DROP VIEW cases;
ALTER TABLE results DROP COLUMN cuda_branch;
CREATE VIEW cases AS SELECT id FROM results;  -- migration 17 makes it again
PRAGMA user_version = 15;
COMMIT;
)sql",
                        api, beta));
  }
  Store store(path);  // migrates 15 → 16
  GapLog log(store);
  const auto first = log.entry(api, std::string("alpha"));
  const auto second = log.entry(api, std::string("beta"));
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  EXPECT_EQ(log.entries(api).size(), 2U);
  EXPECT_EQ(first->first_seen_run, alpha);
  EXPECT_EQ(first->last_seen_run, alpha);
  EXPECT_EQ(first->status, "open") << "beta's run fixed beta's copy, not alpha's";
  EXPECT_EQ(first->fixed_in_run, 0);
  ASSERT_EQ(first->test_list.size(), 1U);
  EXPECT_EQ(first->test_list[0].file, "test_a.py");
  EXPECT_EQ(second->first_seen_run, beta);
  EXPECT_EQ(second->status, "fixed");
  EXPECT_EQ(second->fixed_in_run, beta);
  ASSERT_EQ(second->test_list.size(), 1U);
  EXPECT_EQ(second->test_list[0].file, "test_b.py");
  EXPECT_EQ(first->note, "looked at");
  EXPECT_EQ(second->note, "looked at");
  const auto by_hand = log.entry("torch.cuda.by_hand");
  ASSERT_TRUE(by_hand);
  EXPECT_EQ(by_hand->suite, "");
  EXPECT_EQ(by_hand->note, "by hand");
  // A run of alpha now changes alpha's entry alone.
  EXPECT_EQ(log.for_run(alpha).size(), 1U);
  EXPECT_EQ(log.for_run(alpha)[0].suite, "alpha");
}

// Issue 32's real case (tests/parsers/fixtures/gaps/issue32/README.md): ignite's conftest fails to
// import under the shim, so its file reports only the collection error. The baseline's 4 tests
// of the file are lost: one file error entry names the file and them; the collection error is
// not an entry of its own.
class FileErrorGap : public ::testing::Test {
 protected:
  void SetUp() override {
    Store store(dir_ / "results.db");
    RunRecord b = run_of("baseline", 0);
    const std::int64_t baseline = store.begin_run(b, {"metrics/test_gpu_info.py"});
    FileRecord rec;
    rec.path = "metrics/test_gpu_info.py";
    rec.status = FileStatus::kFailed;
    std::vector<TestCase> tests;
    for (const char* name :
         {"test_no_pynvml_package", "test_no_gpu", "test_gpu_info_on_cuda", "test_gpu_info_mock"}) {
      TestCase t;
      t.classname = "tests.ignite.metrics.test_gpu_info";
      t.name = name;
      tests.push_back(std::move(t));
    }
    store.record_file(baseline, rec, tests);
    store.finish_run(baseline, "failed", "2026-11-25T06:48:00Z");
    RunRecord r = run_of("shim", baseline);
    r.environment = environment_;
    shim_ = store.begin_run(r, {"metrics/test_gpu_info.py"});
    rec.status = FileStatus::kError;
    rec.exit_code = 4;
    TestCase collection;
    collection.classname = "tests.ignite.metrics.test_gpu_info";
    collection.name = "<collection>";
    collection.status = CaseStatus::kError;
    collection.exception = "TypeError";
    collection.message =
        "module, class, method, function, traceback, frame, or code object was expected, got "
        "builtin_function_or_method";
    collection.traceback = fixture_text("gaps/issue32/ignite-oldshim-collection.txt");
    store.record_file(shim_, rec, {collection});
    store.finish_run(shim_, "failed", "2026-11-25T06:49:00Z");
  }
  std::vector<GapEntry> update() {
    Store store(dir_ / "results.db");
    GapLog(store).update_from_run(shim_);
    return GapLog(store).for_run(shim_);
  }
  TempDir dir_;
  std::string environment_ = R"({"shim": {"cuda_lands_on": "cpu", "device_objects": "keep"}})";
  std::int64_t shim_ = 0;
};

TEST_F(FileErrorGap, NamesTheFileAndTheBaselineTestsItLost) {
  const auto entries = update();
  ASSERT_EQ(entries.size(), 1U) << entries[0].api;
  const GapEntry& e = entries[0];
  // Named by its exception and the first 100 bytes of its normalized message.
  EXPECT_EQ(e.api,
            "file error: TypeError: module, class, method, function, traceback, frame, or code "
            "object was expected, got builtin_function…");
  EXPECT_EQ(e.kind, "file_error");
  EXPECT_EQ(e.tests, 4);
  EXPECT_EQ(lost_by_file(e), (std::map<std::string, int>{{"metrics/test_gpu_info.py", 4}}));
  EXPECT_NE(e.why.find("torch.package.package_importer._patched_getfile"), std::string::npos)
      << e.why;
  EXPECT_NE(e.action.find("carry torch.package.package_importer._patched_getfile"),
            std::string::npos)
      << e.action;
  EXPECT_TRUE(e.setting.empty());
}

TEST_F(FileErrorGap, AFileThatLostNothingIsNamedItself) {
  {
    // The baseline failed the same way: nothing lost, the file is still its entry's evidence.
    Store store(dir_ / "results.db");
    store.database().exec(
        "DELETE FROM results WHERE file_id IN (SELECT id FROM files WHERE run_id = 1)");
  }
  const auto entries = update();
  ASSERT_EQ(entries.size(), 1U);
  ASSERT_EQ(entries[0].test_list.size(), 1U);
  EXPECT_EQ(entries[0].test_list[0].name, kGapFileTest);
  EXPECT_EQ(lost_by_file(entries[0]),
            (std::map<std::string, int>{{"metrics/test_gpu_info.py", 0}}));
}

// A failure of each named device gap, as lightning's and stable-baselines3's real runs printed
// it, in a shim run with the given shim settings: the entries' actions and settings.
std::vector<GapEntry> device_gaps(const std::string& environment) {
  TempDir dir;
  Store store(dir / "results.db");
  RunRecord r = run_of("shim", 0);
  r.environment = environment;
  const std::int64_t id = store.begin_run(r, {"core/test_saving.py"});
  FileRecord rec;
  rec.path = "core/test_saving.py";
  rec.status = FileStatus::kFailed;
  std::vector<TestCase> tests;
  for (const auto& [name, file, message] :
       {std::tuple{"test_device_placement", "lightning-keep-test_device_placement_gpu-cuda_0.txt",
                   "assert device(type='cpu') == device(type='cuda', index=0)"},
        std::tuple{"test_map_location",
                   "lightning-keep-test_load_from_checkpoint_map_location_gpu_None.txt",
                   "assert 'cpu' == 'cuda'"},
        std::tuple{"test_predict", "sb3-keep-test_predict_auto-CartPole-v1-DQN.txt",
                   "assert 'cuda' == 'cpu'"}}) {
    TestCase t;
    t.classname = "tests.core.test_saving";
    t.name = name;
    t.status = CaseStatus::kFailed;
    t.exception = "AssertionError";
    t.message = message;
    t.traceback = fixture_text(std::string("gaps/issue32/") + file);
    tests.push_back(std::move(t));
  }
  store.record_file(id, rec, tests);
  store.finish_run(id, "failed", "2026-11-25T06:49:00Z");
  GapLog(store).update_from_run(id);
  return GapLog(store).for_run(id);
}

const GapEntry* find_entry(const std::vector<GapEntry>& entries, std::string_view api) {
  for (const GapEntry& e : entries) {
    if (e.api == api) return &e;
  }
  return nullptr;
}

TEST(GapLog, EachEntrySaysWhatToDoFromTheSettingTheRunUsed) {
  // The run used keep (the shim's status says so): identity is fixed by redirect.
  const auto keep = device_gaps(R"({"shim": {"cuda_lands_on": "cpu", "device_objects": "keep"}})");
  const GapEntry* identity = find_entry(keep, kGapDeviceIdentity);
  ASSERT_TRUE(identity);
  EXPECT_EQ(identity->setting, "TORCHDEVICE_DEVICE_OBJECTS=redirect");
  EXPECT_NE(identity->action.find("set TORCHDEVICE_DEVICE_OBJECTS=redirect"), std::string::npos)
      << identity->action;
  EXPECT_EQ(identity->equivalent, "torch.device(\"cpu\")");
  const GapEntry* type = find_entry(keep, kGapDeviceType);
  ASSERT_TRUE(type);
  EXPECT_TRUE(type->setting.empty()) << "no setting changes what a tensor reports";
  EXPECT_NE(type->action.find("no shim setting changes it"), std::string::npos) << type->action;
  EXPECT_EQ(type->equivalent, "'cpu'");
  // A CUDA device object's type is answered by redirect, which builds it as the device used.
  const GapEntry* object_type = find_entry(keep, kGapCudaObjectType);
  ASSERT_TRUE(object_type);
  EXPECT_EQ(object_type->setting, "TORCHDEVICE_DEVICE_OBJECTS=redirect");
  EXPECT_NE(object_type->action.find("(cpu)"), std::string::npos) << object_type->action;
  // The run used redirect already (whatever the shim's default): nothing to try.
  const auto redirect =
      device_gaps(R"({"shim": {"cuda_lands_on": "cpu", "device_objects": "redirect"}})");
  identity = find_entry(redirect, kGapDeviceIdentity);
  ASSERT_TRUE(identity);
  EXPECT_TRUE(identity->setting.empty());
  EXPECT_NE(identity->action.find("used TORCHDEVICE_DEVICE_OBJECTS=redirect already"),
            std::string::npos)
      << identity->action;
  // A type read from a device object the code kept (torcheval's metric._device) is 'cuda' under
  // keep, which --try-settings then tries; one read from a tensor stays the device used's.
  type = find_entry(redirect, kGapDeviceType);
  ASSERT_TRUE(type);
  EXPECT_EQ(type->setting, "TORCHDEVICE_DEVICE_OBJECTS=keep");
  EXPECT_EQ(type->action.rfind("no shim setting changes a tensor's device type", 0), 0U)
      << type->action;
  EXPECT_NE(type->action.find("TORCHDEVICE_DEVICE_OBJECTS=keep builds that object as written"),
            std::string::npos)
      << type->action;
  object_type = find_entry(redirect, kGapCudaObjectType);
  ASSERT_TRUE(object_type);
  EXPECT_TRUE(object_type->setting.empty());
  EXPECT_NE(object_type->action.find("an index beyond the devices seen"), std::string::npos)
      << object_type->action;
  // Only the variable said it (a shim without device_objects in its status): the same.
  EXPECT_TRUE(
      find_entry(device_gaps(R"({"shim_settings": {"TORCHDEVICE_DEVICE_OBJECTS": "Redirect"}})"),
                 kGapDeviceIdentity)
          ->setting.empty());
  // Nothing says: the setting is suggested, not assumed to be the default.
  EXPECT_EQ(find_entry(device_gaps("{}"), kGapDeviceIdentity)->setting,
            "TORCHDEVICE_DEVICE_OBJECTS=redirect");
}

TEST_F(FileErrorGap, APersonsActionStaysAndATrialIsRecorded) {
  const std::string api = update().at(0).api;
  Store store(dir_ / "results.db");
  GapEdit edit;
  edit.action = "import torch.distributed.optim before the shim";
  GapLog(store).set(api, edit);
  GapLog(store).update_from_run(shim_);
  auto e = GapLog(store).entry(api);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->action, "import torch.distributed.optim before the shim");
  EXPECT_TRUE(e->action_by_person);
  edit.action = "auto";
  GapLog(store).set(api, edit);
  GapLog(store).update_from_run(shim_);
  EXPECT_NE(GapLog(store).entry(api)->action.find("carry "), std::string::npos)
      << "handed back to the runs";
  GapLog(store).record_trial(GapLog(store).entry(api)->suite, api, shim_,
                             "TORCHDEVICE_DEVICE_OBJECTS=redirect", 4, 3);
  e = GapLog(store).entry(api);
  EXPECT_EQ(e->trial.setting, "TORCHDEVICE_DEVICE_OBJECTS=redirect");
  EXPECT_EQ(e->trial.run, shim_);
  EXPECT_EQ(e->trial.tests, 4);
  EXPECT_EQ(e->trial.passed, 3);
}

// Migration 13 rebuilds gaps for the kind file_error and the actions' columns: an action or
// equivalent stored before it was a person's (runs never wrote one), and stays theirs.
TEST(GapLog, MigrationThirteenKeepsEntriesAndTheActionsPeopleSet) {
  TempDir dir;
  const auto path = dir / "results.db";
  {
    Store store(path);
    GapEdit edit;
    edit.action = "document it";
    GapLog(store).set("torch.cuda.ipc_collect", edit);
    GapLog(store).set("torch.cuda.synchronize", GapEdit{});
  }
  rewind_to_schema_11(path);
  Store store(path);  // migrates 11 → 12 → 13
  auto e = GapLog(store).entry("torch.cuda.ipc_collect");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->action, "document it");
  EXPECT_TRUE(e->action_by_person);
  EXPECT_FALSE(GapLog(store).entry("torch.cuda.synchronize")->action_by_person);
  GapEdit kind;
  kind.kind = "file_error";
  GapLog(store).set("file error: x", kind);
  EXPECT_EQ(GapLog(store).entry("file error: x")->kind, "file_error");
}

}  // namespace
}  // namespace devshim
