// `runner gaps scan` end to end: the real runner asks the test interpreter's torch which public
// CUDA APIs exist and the shim which it carries. The gap log's other commands, on recorded runs:
// tests/runner/cli/gaps_test.cpp.
#include <gtest/gtest.h>

#include "runner/results/gap_log.h"
#include "runner/results/store.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
namespace fs = std::filesystem;

class GapsScanE2E : public ::testing::Test {
 protected:
  fs::path db() const { return dir_.path() / "results.db"; }
  std::optional<GapEntry> entry(const std::string& api) {
    Store store(db());
    return GapLog(store).entry(api);
  }
  TempDir dir_;
};

TEST_F(GapsScanE2E, ScanMakesUncarriedCudaApisUnpatchedEntries) {
  auto scan = testing::run({RUNNER_PATH, "gaps", "scan", "--python", TORCH_PYTHON, "--shim-dir",
                            SHIM_DIR, "--db", db().string()},
                           {}, 120s);
  ASSERT_EQ(scan.exit_code, 0) << scan.output;
  EXPECT_NE(scan.output.find("public CUDA APIs, the shim carries"), std::string::npos);
  auto uncarried = entry("torch.cuda.get_gencode_flags");  // torch has it; the shim does not
  ASSERT_TRUE(uncarried);
  EXPECT_EQ(uncarried->kind, "unpatched");
  EXPECT_EQ(uncarried->status, "open");
  EXPECT_FALSE(entry("torch.cuda.get_device_properties")) << "the shim carries it";
}

}  // namespace
}  // namespace devshim
