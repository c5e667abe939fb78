#include "runner/results/differential.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

namespace devshim {
namespace {

TEST(DiffClass, EveryCellOfTheDifferentialTable) {
  using S = CaseStatus;
  EXPECT_EQ(diff_class(S::kPassed, S::kPassed), "compatible");
  EXPECT_EQ(diff_class(S::kPassed, S::kFailed), "regression");
  EXPECT_EQ(diff_class(S::kPassed, S::kError), "regression");
  EXPECT_EQ(diff_class(S::kSkipped, S::kPassed), "unlocked");
  EXPECT_EQ(diff_class(S::kFailed, S::kPassed), "unlocked");
  EXPECT_EQ(diff_class(std::nullopt, S::kPassed), "unlocked");
  EXPECT_EQ(diff_class(S::kFailed, S::kFailed), "broken_both");
  EXPECT_EQ(diff_class(S::kSkipped, S::kError), "broken_both");
  EXPECT_EQ(diff_class(S::kSkipped, S::kSkipped), "skipped_both");
  EXPECT_EQ(diff_class(S::kFailed, S::kSkipped), "skipped_both");
  EXPECT_EQ(diff_class(S::kPassed, S::kSkipped), "newly_skipped");
  EXPECT_EQ(diff_class(S::kXfailed, S::kXpassed), "compatible");
}

// A test that passed without the shim and ran a CUDA branch under it (cuda_branch: device work,
// or a failure in a CUDA-only block) is no regression when it fails, and not plainly compatible
// when it passes; its other classes stay what they were.
TEST(DiffClass, ACudaBranchThatRanOnlyUnderTheShim) {
  using S = CaseStatus;
  EXPECT_EQ(diff_class(S::kPassed, S::kFailed, true), "cuda_branch_failed");
  EXPECT_EQ(diff_class(S::kPassed, S::kError, true), "cuda_branch_failed");
  EXPECT_EQ(diff_class(S::kPassed, S::kPassed, true), "cuda_branch_passed");
  EXPECT_EQ(diff_class(S::kXfailed, S::kXpassed, true), "cuda_branch_passed");
  EXPECT_EQ(diff_class(S::kFailed, S::kFailed, true), "broken_both");
  EXPECT_EQ(diff_class(S::kSkipped, S::kPassed, true), "unlocked");
  EXPECT_EQ(diff_class(S::kPassed, S::kSkipped, true), "newly_skipped");
  EXPECT_FALSE(counts_as_regression("cuda_branch_failed"));
  std::set<std::string> classes;
  for (const auto& [cls, meaning] : differential_classes()) classes.insert(cls);
  EXPECT_EQ(classes.count("cuda_branch_failed"), 1U);
  EXPECT_EQ(classes.count("cuda_branch_passed"), 1U);
}

TEST(CudaPath, DeviceWorkOrAFailureInACudaBlockRanACudaBranch) {
  using S = CaseStatus;
  RunResultStatuses::Row row;
  row.status = S::kFailed;
  EXPECT_FALSE(ran_cuda_branch(row));
  row.cuda_contact = CudaContact::kAsked;
  EXPECT_FALSE(ran_cuda_branch(row)) << "a query or seeding is no branch";
  EXPECT_TRUE(only_asked_cuda(row, S::kPassed, false));
  EXPECT_FALSE(took_cuda_path(row, S::kPassed, false));
  row.fails_in_cuda_branch = true;
  EXPECT_TRUE(ran_cuda_branch(row)) << "an obj.cuda() that raised before any device work";
  EXPECT_TRUE(took_cuda_path(row, S::kPassed, false));
  EXPECT_FALSE(only_asked_cuda(row, S::kPassed, false));
  row.status = S::kPassed;  // the flag is a failure's
  EXPECT_FALSE(ran_cuda_branch(row));
  row.cuda_contact = CudaContact::kDeviceWork;
  EXPECT_TRUE(ran_cuda_branch(row));
  row.cuda_contact = CudaContact::kNone;
  EXPECT_TRUE(took_cuda_path(row, S::kSkipped, false)) << "unskipped";
  EXPECT_TRUE(took_cuda_path(row, std::nullopt, true)) << "new under the shim";
  EXPECT_FALSE(took_cuda_path(row, S::kPassed, false));
}

TEST(CudaPath, ABaselineThatSawCudaRanItsBranchesItself) {
  EXPECT_TRUE(saw_cuda(nlohmann::json{{"cuda_available", true}}));
  EXPECT_FALSE(saw_cuda(nlohmann::json{{"cuda_available", false}}));
  EXPECT_FALSE(saw_cuda(nlohmann::json::object()));
  EXPECT_FALSE(saw_cuda(nlohmann::json("cuda_available")));
  // The differential: the same row is a regression against a baseline that saw CUDA.
  RunResultStatuses now, before;
  now.files = before.files = {"test_a.py"};
  now.rows.push_back({.result_id = 2, .test_id = 7, .file = 0, .status = CaseStatus::kFailed});
  now.rows.back().cuda_contact = CudaContact::kDeviceWork;
  before.rows.push_back({.result_id = 1, .test_id = 7, .file = 0, .status = CaseStatus::kPassed});
  const RunStatuses baseline(now, before, {"test_a.py"});
  EXPECT_EQ(baseline.diff_class_of(now.rows[0]), "cuda_branch_failed");
  EXPECT_EQ(baseline.diff_class_of(now.rows[0], /*cuda_branches=*/false), "regression");
}

TEST(SkipWantsNoGpu, TheReasonsOfSkipsWhenAGpuIsThere) {
  // accelerate's require_cpu (src/accelerate/test_utils/testing.py @16cb6eb8), as pytest and
  // unittest report it.
  EXPECT_TRUE(skip_wants_no_gpu("test requires only a CPU"));
  EXPECT_TRUE(skip_wants_no_gpu("Skipped: test requires only a CPU"));
  EXPECT_TRUE(skip_wants_no_gpu("CPU-only test"));
  EXPECT_TRUE(skip_wants_no_gpu("skipped because CUDA is available"));
  // Skips for want of a device, or for other reasons, are not.
  EXPECT_FALSE(skip_wants_no_gpu("test requires a GPU"));
  EXPECT_FALSE(skip_wants_no_gpu("test requires a CUDA GPU or XPU"));
  EXPECT_FALSE(skip_wants_no_gpu("test requires a non-XPU"));
  EXPECT_FALSE(skip_wants_no_gpu("test is slow"));
  EXPECT_FALSE(skip_wants_no_gpu(""));
}

// Every skip reason of real runs (tests/parsers/fixtures/gaps/issue32/skips.json: lightning,
// ignite, accelerate), each with whether it says the test wants no GPU: "Skip if GPU" and "No
// need to mock if has GPU" (ignite) by meaning, not by a list of phrases.
TEST(SkipWantsNoGpu, RealSkipReasonsByMeaning) {
  std::ifstream in(std::string(PARSER_FIXTURES_DIR) + "/gaps/issue32/skips.json");
  const auto reasons = nlohmann::json::parse(in);
  ASSERT_GE(reasons.size(), 30U);
  int wanting = 0;
  for (const auto& r : reasons) {
    const std::string reason = r["reason"];
    EXPECT_EQ(skip_wants_no_gpu(reason), r["wants_no_gpu"].get<bool>()) << reason;
    wanting += r["wants_no_gpu"].get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(wanting, 3);
}

TEST(DiffClass, LostCountsAsARegression) {
  EXPECT_TRUE(counts_as_regression("regression"));
  EXPECT_TRUE(counts_as_regression("lost"));
  EXPECT_FALSE(counts_as_regression("broken_both"));
  const auto& classes = differential_classes();
  ASSERT_GE(classes.size(), 3U);
  EXPECT_EQ(classes[0].first, "regression");
  EXPECT_EQ(classes[1].first, "cuda_branch_failed") << "told apart right after the regressions";
  EXPECT_EQ(classes[2].first, "lost") << "listed beside the regressions";
}

// Rows of runs: (file index, test id, status).
RunResultStatuses statuses(std::vector<std::string> files,
                           std::vector<std::tuple<std::uint32_t, std::int64_t, CaseStatus>> rows) {
  RunResultStatuses s;
  s.files = std::move(files);
  std::int64_t id = 0;
  for (const auto& [file, test, status] : rows) {
    s.rows.push_back({.result_id = ++id, .test_id = test, .file = file, .status = status});
  }
  return s;
}

TEST(MissingRows, TheOtherRunsTestsThisRunDoesNotReportInTheFilesAsked) {
  using S = CaseStatus;
  // The baseline: a.py has tests 1 and 2, b.py test 3, c.py test 4.
  const auto baseline =
      statuses({"a.py", "b.py", "c.py"},
               {{0, 1, S::kPassed}, {0, 2, S::kSkipped}, {1, 3, S::kPassed}, {2, 4, S::kPassed}});
  // The shim run reports a.py's test 1 only; b.py reported nothing (its import failed).
  const auto shim = statuses({"a.py"}, {{0, 1, S::kFailed}});
  const auto lost = missing_rows(shim, baseline, {"a.py", "b.py"});
  ASSERT_EQ(lost.size(), 2U);
  EXPECT_EQ(lost[0].test_id, 2);
  EXPECT_EQ(lost[0].status, S::kSkipped) << "the baseline's status";
  EXPECT_EQ(lost[1].test_id, 3);
  EXPECT_TRUE(missing_rows(shim, baseline, {}).empty()) << "c.py was not asked for";
  EXPECT_TRUE(missing_rows(baseline, baseline, {"a.py", "b.py", "c.py"}).empty());
}

// captum's names (tests/influence/_core/test_naive_influence.py, parameterized.expand) and the
// forms the index takes.
TEST(WithoutCaseIndex, TakesOutParameterizedsIndexOnly) {
  EXPECT_EQ(without_case_index(
                "test_matches_linear_regression_08_sum_NaiveInfluenceFunction_0_001_influence_"),
            "test_matches_linear_regression_#_sum_NaiveInfluenceFunction_0_001_influence_");
  EXPECT_EQ(without_case_index("test_flatten_unflattener_0__2_3_4_5_"),
            "test_flatten_unflattener_#__2_3_4_5_");
  EXPECT_EQ(without_case_index("test_scale_3"), "test_scale_#");
  EXPECT_EQ(without_case_index("test_fp16_path"), "") << "digits inside a word are no index";
  EXPECT_EQ(without_case_index("test_x[cuda-0]"), "") << "pytest's ids of values";
  EXPECT_EQ(without_case_index("test_x[3]"), "");
  EXPECT_EQ(without_case_index("test_plain"), "");
}

// pytest names a value it does not print by its argument and index (tensordict's devices from
// get_available_devices(): `[td-device0]`, `[nested_td-device1]`, ...); a "cuda" device added to
// the list renumbers every case after it.
TEST(WithoutCaseIndex, TakesOutPytestsIndexedIds) {
  EXPECT_EQ(without_case_index("test_ops[nested_td-device3]", 8), "test_ops[nested_td-device#]");
  EXPECT_EQ(without_case_index("test_repr[dtype0-device2]", 4), "test_repr[dtype#-device#]");
  EXPECT_EQ(without_case_index("test_pin[False-0-td-device1]", 2), "test_pin[False-0-td-device#]");
  EXPECT_EQ(without_case_index("test_x[shape0]", 1), "test_x[shape#]");
  EXPECT_EQ(without_case_index("test_x[a-b]", 9), "");
  EXPECT_EQ(without_case_index("test_x[0a1]", 9), "") << "not an identifier";
  EXPECT_EQ(without_case_index("test_x[1-2", 9), "") << "no closing bracket";
  // Values that end in digits: beyond the test's cases, or written with a leading zero.
  EXPECT_EQ(without_case_index("test_cast[float32]", 3), "");
  EXPECT_EQ(without_case_index("test_cast[float16-device1]", 3), "test_cast[float16-device#]");
  EXPECT_EQ(without_case_index("test_x[v01]", 9), "");
  EXPECT_EQ(without_case_index("test_x[device3]", 3), "") << "index 3 of 3 cases cannot be";
  EXPECT_EQ(without_case_index("test_x[device0]"), "") << "no case count: no index";
}

// pytest makes colliding ids unique by their occurrence (BackPACK's devices under the shim:
// torch.device("cpu") and torch.device("cuda") built as the CPU's both print "cpu").
TEST(PytestUniqueIdOrigins, TakeOutTheOccurrencePytestAppended) {
  using Origins = std::vector<std::pair<std::string, std::size_t>>;
  EXPECT_EQ(pytest_unique_id_origins("test_x[cpu0]"), (Origins{{"test_x[cpu]", 0}}));
  EXPECT_EQ(pytest_unique_id_origins("test_x[dev=cpu-N=1-works=True1]"),
            (Origins{{"test_x[dev=cpu-N=1-works=True]", 1}}));
  EXPECT_EQ(pytest_unique_id_origins("test_x[n-1_0]"), (Origins{{"test_x[n-1]", 0}}))
      << "an id ending in a digit gets a '_' before its occurrence";
  EXPECT_EQ(pytest_unique_id_origins("test_x[foo_12]"), (Origins{{"test_x[foo_]", 12}}));
  // Stacked parametrizes: the number ends the id of one of them.
  EXPECT_EQ(pytest_unique_id_origins("test_mjp[dev=cpu-LeakyReLU(0.1)1-sum_batch=True]"),
            (Origins{{"test_mjp[dev=cpu-LeakyReLU(0.1)-sum_batch=True]", 1}}));
  EXPECT_EQ(pytest_unique_id_origins("test_x[cpu0-n2]"),
            (Origins{{"test_x[cpu-n2]", 0}, {"test_x[cpu0-n]", 2}}));
  EXPECT_EQ(pytest_unique_id_origins("test_x[cpu]"), Origins{});
  EXPECT_EQ(pytest_unique_id_origins("test_x[3]"), Origins{}) << "a number alone is a value";
  EXPECT_EQ(pytest_unique_id_origins("test_x[a-3]"), Origins{});
  EXPECT_EQ(pytest_unique_id_origins("test_x[n=3]"), Origins{});
  EXPECT_EQ(pytest_unique_id_origins("test_x"), Origins{});
  EXPECT_EQ(pytest_unique_id_origins("test_x[cpu0"), Origins{}) << "no closing bracket";
  EXPECT_EQ(pytest_unique_id_origins("test_x[a99999999999999999999999]"), Origins{});
}

}  // namespace
}  // namespace devshim
