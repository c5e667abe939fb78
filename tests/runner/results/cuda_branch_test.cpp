#include "runner/results/cuda_branch.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "parsers/gap_attribution.h"

namespace devshim {
namespace {

// What pytest printed of real failures under the shim (tests/e2e/suites/cuda-branches, torch
// 2.13): a distribution has no .cuda() on any device; gpytorch's prior read for a parameter it
// lacks (an nn.Module: its __getattr__ raises).
TEST(CudaBranch, AnAttributeAnObjectLacksIsTheTestsOwnError) {
  EXPECT_TRUE(is_own_error("AttributeError", "'HalfCauchy' object has no attribute 'cuda'"));
  EXPECT_TRUE(is_own_error("builtins.AttributeError",
                           "'HalfNormalPrior' object has no attribute 'concentration'"));
  EXPECT_TRUE(is_own_error("AttributeError", "type object 'Prior' has no attribute 'cuda'"));
  EXPECT_TRUE(is_own_error("AttributeError", "module 'numpy' has no attribute 'float'"));
  EXPECT_TRUE(is_own_error("NameError", "name 'reference' is not defined"));
  EXPECT_TRUE(is_own_error("UnboundLocalError",
                           "cannot access local variable 'x' where it is not associated with a "
                           "value"));
}

// What the shim builds in CUDA's place, and torch's modules, are the shim's to carry: not the
// test's own error.
TEST(CudaBranch, AnAttributeOfWhatTheShimBuiltOrOfTorchIsNotTheTestsOwn) {
  EXPECT_FALSE(is_own_error("AttributeError", "module 'torch.cuda' has no attribute 'foo'"));
  EXPECT_FALSE(is_own_error("AttributeError", "module 'torch._C' has no attribute '_cuda_x'"));
  EXPECT_FALSE(
      is_own_error("AttributeError", "'DeviceProperties' object has no attribute 'gcnArchName'"));
  EXPECT_FALSE(is_own_error("AttributeError", "'torch.device' object has no attribute 'idx'"));
  EXPECT_FALSE(is_own_error("AttributeError", "'Stream' object has no attribute 'cuda_stream'"));
  EXPECT_FALSE(is_own_error("AttributeError", "can't set attribute"));
  EXPECT_FALSE(is_own_error("AssertionError", "'HalfCauchy' object has no attribute 'cuda'"));
  EXPECT_FALSE(is_own_error("RuntimeError", "name 'x' is not defined"));
}

TEST(CudaBranch, ValuesBeyondATolerance) {
  EXPECT_TRUE(is_numeric_difference("Tensor-likes are not close!", ""));
  EXPECT_TRUE(is_numeric_difference("0.79 not less than or equal to 1e-05", ""));
  EXPECT_TRUE(is_numeric_difference("\nNot equal to tolerance rtol=1e-07, atol=0", ""));
  EXPECT_TRUE(is_numeric_difference("0.1 != 0.2 within 7 places (0.1 difference)", ""));
  EXPECT_TRUE(is_numeric_difference(
      "assert False",
      "assert False\n +  where False = <built-in method allclose of type object>(a, b)"));
  EXPECT_FALSE(is_numeric_difference("assert 'cpu' == 'cuda'", "assert 'cpu' == 'cuda'"));
  EXPECT_FALSE(is_numeric_difference("expected 3 places to be set", ""));
}

TEST(CudaBranch, TheFailuresTextBeforeItsGapEntry) {
  TestCase t;
  t.status = CaseStatus::kError;
  t.culprit = "timeout";
  t.exception = "Timeout";
  EXPECT_EQ(failure_kind(t), FailureKind::kTimeout);
  t.culprit.clear();
  t.exception = "AttributeError";
  t.message = "'HalfCauchy' object has no attribute 'cuda'";
  EXPECT_EQ(failure_kind(t), FailureKind::kOwnError);
  t.exception = "AssertionError";
  t.message = "Tensor-likes are not close!";
  EXPECT_EQ(failure_kind(t), FailureKind::kNumeric);
  t.message = "assert False";
  EXPECT_EQ(failure_kind(t), FailureKind::kOther);
}

// The gap entry decides first (a device assertion, what only CUDA has, the environment, an API
// not carried), then the failure's text; a timeout before all.
TEST(CudaBranch, TheCauseFromTheGapEntryThenTheText) {
  using C = CudaBranchCause;
  using K = FailureKind;
  EXPECT_EQ(cuda_branch_cause(K::kOther, kGapDeviceType, kGapFailing), C::kAssertsCudaDevice);
  EXPECT_EQ(cuda_branch_cause(K::kOther, kGapDeviceIdentity, kGapFailing), C::kAssertsCudaDevice);
  EXPECT_EQ(cuda_branch_cause(K::kOther, kGapCudaObjectType, kGapFailing), C::kAssertsCudaDevice);
  EXPECT_EQ(cuda_branch_cause(K::kOther, kGapCudaDeviceRefused, kGapFailing),
            C::kAssertsCudaDevice);
  EXPECT_EQ(cuda_branch_cause(K::kOther, kGapCrossDevice, kGapFailing), C::kNeedsCuda);
  EXPECT_EQ(cuda_branch_cause(K::kOther, kGapStrictXpass, kGapFailing), C::kNeedsCuda);
  EXPECT_EQ(cuda_branch_cause(K::kOther, "torch.cuda.graphs.CUDAGraph", kGapCudaOnly),
            C::kNeedsCuda);
  EXPECT_EQ(cuda_branch_cause(K::kOther, kGapPortInUse, kGapFailing), C::kEnvironment);
  EXPECT_EQ(cuda_branch_cause(K::kOther, "torch.cuda.get_device_properties", kGapFailing),
            C::kNotCarried);
  EXPECT_EQ(cuda_branch_cause(K::kOther, "aten::_fft_r2c", kGapUnsupportedOp), C::kNotCarried);
  EXPECT_EQ(cuda_branch_cause(K::kOwnError, "test's own error in a CUDA-only branch: x",
                              kGapUnattributed),
            C::kOwnError);
  EXPECT_EQ(cuda_branch_cause(K::kNumeric, "", ""), C::kNumeric);
  EXPECT_EQ(
      cuda_branch_cause(K::kOther, "unattributed AssertionError: assert False", kGapUnattributed),
      C::kUnexplained);
  EXPECT_EQ(cuda_branch_cause(K::kTimeout, kGapDeviceType, kGapFailing), C::kTimeout);
}

TEST(CudaBranch, EveryCauseHasItsTextInOrder) {
  std::set<std::string_view> ids;
  for (std::size_t i = 0; i < cuda_branch_causes().size(); ++i) {
    const CudaBranchCauseText& t = cuda_branch_causes()[i];
    EXPECT_EQ(static_cast<std::size_t>(t.cause), i);
    EXPECT_TRUE(ids.insert(t.id).second) << t.id;
    EXPECT_FALSE(t.title.empty());
    EXPECT_TRUE(t.severity == "high" || t.severity == "medium" || t.severity == "low") << t.id;
    // An action names no setting: a setting that can change the outcome is the gap entry's.
    EXPECT_EQ(std::string(t.action).find("TORCHDEVICE_"), std::string::npos) << t.id;
  }
  EXPECT_EQ(cuda_branch_cause_text(CudaBranchCause::kOwnError).severity, "low");
  EXPECT_EQ(cuda_branch_cause_text(CudaBranchCause::kNotCarried).severity, "high");
}

}  // namespace
}  // namespace devshim
