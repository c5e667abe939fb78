// Regressions told apart from CUDA branches, end to end: the real runner, the real shim and torch
// on tests/e2e/suites/cuda-branches, without and with the shim. What the reports make of it, on
// recorded runs of the same suite: tests/runner/cli/cuda_branch_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
namespace fs = std::filesystem;

// The shim's record and the runner agree on every test: a test of shared code the shim changes
// is the one regression; the in-body CUDA branches that now run fail by cause or pass; an
// optimizer's own stream query is no CUDA path, and a test that only seeds only asked. A project
// that is no git checkout says once why its reports have no upstream links.
TEST(CudaBranchE2E, TheShimsRecordTellsRegressionsFromCudaBranches) {
  TempDir dir;
  const fs::path out = dir / "out";
  // A copy outside any git checkout, as an exported tree: no commit for its source_url.
  fs::copy(fs::path(E2E_SUITES_DIR) / "cuda-branches", dir / "project",
           fs::copy_options::recursive);
  auto r = testing::run(
      {RUNNER_PATH, (dir / "project").string(), "--differential", "--db",
       (dir / "results.db").string(), "--out", out.string(), "--python", TORCH_PYTHON, "-j", "2"},
      {}, 300s);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // Said once for both runs, and in the report.
  constexpr const char* kNoLinks = "runner: no upstream links: the suite names a source_url";
  const std::size_t said = r.output.find(kNoLinks);
  EXPECT_NE(said, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(kNoLinks, said + 1), std::string::npos) << r.output;
  EXPECT_NE(testing::read_file(out / "report.md").find("- no upstream links: the suite names"),
            std::string::npos);
  EXPECT_NE(r.output.find("runner: against baseline run 1: 1 regression (1 failing, 0 lost), 0 "
                          "unlocked\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("runner: CUDA branches that ran only under the shim: 1 pass, 3 fail "
                          "(asserts a CUDA device: 2, the test's own error (any device): 1).\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("runner: 4 tests took a CUDA path under the shim (device work): 1 "
                          "passed, 3 failed (0 of them fail without the shim too), 0 skipped. 1 "
                          "more only asked (a query, seeding, a stream).\n"),
            std::string::npos)
      << r.output;

  const auto report = nlohmann::json::parse(testing::read_file(out / "report.json"));
  std::map<std::string, std::string> classes;
  for (const auto& f : report["files"]) {
    for (const auto& c : f["cases"]) classes[c["name"]] = c["diff_class"];
  }
  EXPECT_EQ(classes, (std::map<std::string, std::string>{
                         {"test_zeros_is_a_builtin", "regression"},
                         {"test_branch_asserts_a_cuda_device", "cuda_branch_failed"},
                         {"test_branch_raises_its_own_error", "cuda_branch_failed"},
                         {"test_moves_to_cuda", "cuda_branch_failed"},
                         {"test_branch_passes", "cuda_branch_passed"},
                         {"test_optimizer_step_only", "compatible"},
                         {"test_only_seeds", "compatible"}}));
}

}  // namespace
}  // namespace devshim
