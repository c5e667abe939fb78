#include "runner/results/cuda_branch.h"

#include <algorithm>
#include <array>
#include <string>

#include "parsers/gap_attribution.h"
#include "parsers/text.h"

namespace devshim {

const std::vector<CudaBranchCauseText>& cuda_branch_causes() {
  static const std::vector<CudaBranchCauseText> causes{
      {CudaBranchCause::kNotCarried, "not_carried", "an API the shim does not carry", "high",
       "carry the API in the shim: the gap entry names it and what to do"},
      {CudaBranchCause::kUnexplained, "unexplained", "cause not recognised", "high",
       "read the failure: no rule explains it, so it may be the shim's (a torch call it "
       "rewrote) as well as the test's"},
      {CudaBranchCause::kNumeric, "numeric", "a numeric difference on the device used", "medium",
       "compare with a tolerance that holds on the device used (CUDA's kernels and TF32 round "
       "otherwise), or with a reference computed there"},
      {CudaBranchCause::kTimeout, "timeout", "timed out", "medium",
       "give the file more time (--timeout, or the suite's timeouts), or run the branch on a "
       "smaller input: on the device used it is slower than on a GPU"},
      {CudaBranchCause::kEnvironment, "environment",
       "the run's environment (a port another test held, the network)", "medium",
       "not the shim's: the gap entry says what the suite needs (a lock, the network)"},
      {CudaBranchCause::kAssertsCudaDevice, "asserts_cuda_device", "asserts a CUDA device", "low",
       "none in the shim: the test checks that its tensors sit on a CUDA device (a device type, "
       "is_cuda, a device compared with the CPU's), which no redirection makes true; check the "
       "device the test asked for (torch.accelerator.current_accelerator()), or run it on a "
       "real GPU"},
      {CudaBranchCause::kNeedsCuda, "needs_cuda", "expects what only CUDA has", "low",
       "none on one device: the test expects CUDA's own errors, a second device, CUDA kernels "
       "or a CUDA-only feature; skip it where CUDA is absent, or run it on a real GPU"},
      {CudaBranchCause::kOwnError, "own_error", "the test's own error (any device)", "low",
       "fix the test (or report it upstream): its CUDA branch raises an error its own code "
       "raises on any device, a real GPU included, so no setting of the shim changes it"},
  };
  return causes;
}

const CudaBranchCauseText& cuda_branch_cause_text(CudaBranchCause cause) {
  return cuda_branch_causes()[static_cast<std::size_t>(cause)];
}

namespace {

// The exception's own name: "AttributeError" of "builtins.AttributeError".
std::string_view own_name(std::string_view exception) {
  const std::size_t dot = exception.rfind('.');
  return dot == std::string_view::npos ? exception : exception.substr(dot + 1);
}

// The quoted name after `prefix` at the start of text ("'HalfCauchy'" after "" in "'HalfCauchy'
// object has ..."), without its quotes; empty when text does not begin so.
std::string_view quoted_after(std::string_view text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return {};
  text.remove_prefix(prefix.size());
  if (text.empty() || (text.front() != '\'' && text.front() != '"')) return {};
  const char quote = text.front();
  const std::size_t end = text.find(quote, 1);
  return end == std::string_view::npos ? std::string_view() : text.substr(1, end - 1);
}

// Whether a type's name says the shim may have built it in CUDA's place.
bool names_a_device_thing(std::string_view type) {
  const std::string lower = ascii_lower(type);
  static constexpr std::array<std::string_view, 7> kWords = {
      "device", "stream", "event", "generator", "propert", "cuda", "devshim"};
  return std::any_of(kWords.begin(), kWords.end(),
                     [&](std::string_view w) { return lower.find(w) != std::string::npos; });
}

}  // namespace

bool is_own_error(std::string_view exception, std::string_view message) {
  const std::string_view name = own_name(exception);
  if (name == "NameError" || name == "UnboundLocalError") return true;
  if (name != "AttributeError") return false;
  if (message.find("has no attribute") == std::string_view::npos) return false;
  if (const std::string_view module = quoted_after(message, "module "); !module.empty()) {
    return !module.starts_with("torch") && !module.starts_with("devshim");
  }
  std::string_view type = quoted_after(message, "type object ");
  if (type.empty()) type = quoted_after(message, "");
  return !type.empty() && !names_a_device_thing(type);
}

bool is_numeric_difference(std::string_view message, std::string_view explanation) {
  const std::string text = ascii_lower(std::string(message) + "\n" + std::string(explanation));
  static constexpr std::array<std::string_view, 12> kSays = {"not close",
                                                             "not almost equal",
                                                             "not equal to tolerance",
                                                             "mismatched elements",
                                                             "absolute difference",
                                                             "relative difference",
                                                             "allclose",
                                                             "assert_close",
                                                             "isclose",
                                                             "not less than or equal to",
                                                             "not greater than or equal to",
                                                             "decimal places"};
  if (std::any_of(kSays.begin(), kSays.end(),
                  [&](std::string_view s) { return text.find(s) != std::string::npos; })) {
    return true;
  }
  // unittest's assertAlmostEqual: "0.1 != 0.2 within 7 places (0.1 difference)".
  const std::size_t within = text.find(" within ");
  return within != std::string::npos && text.find(" places", within) != std::string::npos;
}

FailureKind failure_kind(const TestCase& test) {
  if (test.culprit == "timeout") return FailureKind::kTimeout;
  if (is_own_error(test.exception, test.message)) return FailureKind::kOwnError;
  if (is_numeric_difference(test.message, failure_explanation(test.message, test.traceback))) {
    return FailureKind::kNumeric;
  }
  return FailureKind::kOther;
}

CudaBranchCause cuda_branch_cause(FailureKind text, std::string_view gap_api,
                                  std::string_view gap_kind) {
  if (text == FailureKind::kTimeout) return CudaBranchCause::kTimeout;
  if (gap_api == kGapDeviceIdentity || gap_api == kGapDeviceType || gap_api == kGapCudaObjectType ||
      gap_api == kGapCudaDeviceRefused) {
    return CudaBranchCause::kAssertsCudaDevice;
  }
  if (gap_api == kGapCrossDevice || gap_api == kGapCudaOnlyError || gap_api == kGapCudaExtension ||
      gap_api == kGapStrictXpass || gap_kind == kGapCudaOnly) {
    return CudaBranchCause::kNeedsCuda;
  }
  if (gap_api == kGapPortInUse || gap_api == kGapNetworkUnreachable) {
    return CudaBranchCause::kEnvironment;
  }
  if (gap_kind == kGapFailing || gap_kind == kGapUnpatched || gap_kind == kGapUnsupportedOp) {
    return CudaBranchCause::kNotCarried;
  }
  if (text == FailureKind::kOwnError) return CudaBranchCause::kOwnError;
  if (text == FailureKind::kNumeric) return CudaBranchCause::kNumeric;
  return CudaBranchCause::kUnexplained;
}

}  // namespace devshim
