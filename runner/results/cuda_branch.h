// CUDA-branch failures (docs/report-format.md#cuda-branch-failures): tests that passed without the
// shim and fail with it on a CUDA path, a branch their baseline never ran because it saw no CUDA.
// Not regressions: why each fails, worded as what a porter can do about it.
#pragma once

#include <string_view>
#include <vector>

#include "parsers/test_result.h"

namespace devshim {

/// Why a CUDA branch fails, in the order reports list the causes: those the shim's maintainers can
/// act on first, the test's own last.
enum class CudaBranchCause {
  kNotCarried,         ///< an API the shim does not carry (its gap entry names it)
  kUnexplained,        ///< none of the others: read the failure (it may be the shim's)
  kNumeric,            ///< a numeric difference on the device used
  kTimeout,            ///< the test ran past the file's timeout
  kEnvironment,        ///< the run's environment: a port another test held, the network
  kAssertsCudaDevice,  ///< the test checks that its tensors sit on a CUDA device
  kNeedsCuda,          ///< it expects what only CUDA has (CUDA's own errors, kernels, graphs)
  kOwnError,           ///< an error its own code raises on any device: the test's own bug
};

/// A cause as the reports show it.
struct CudaBranchCauseText {
  CudaBranchCause cause;
  std::string_view id;     ///< report.json's name: "asserts_cuda_device", ...
  std::string_view title;  ///< "asserts a CUDA device"
  /// What a porter can do about it: high (the shim's to fix, or to read), medium (the test's
  /// tolerance or time on this device), low (nothing the shim can change: the test needs a
  /// device-neutral check, a real GPU, or a fix of its own).
  std::string_view severity;
  std::string_view action;  ///< what to do; names no setting (a setting is the gap entry's)
};

/// Every cause, in CudaBranchCause's order.
const std::vector<CudaBranchCauseText>& cuda_branch_causes();
const CudaBranchCauseText& cuda_branch_cause_text(CudaBranchCause cause);

/// What a failure's own text says, before its gap entry is known (cuda_branch_cause).
enum class FailureKind {
  kOther,
  kTimeout,   ///< its process was killed at the timeout while it ran (TestCase::culprit)
  kOwnError,  ///< is_own_error
  kNumeric,   ///< is_numeric_difference
};
FailureKind failure_kind(const TestCase& test);

/// Whether an exception and its message are an error the code raises whatever the device, when
/// it comes from a branch only CUDA runs (so a real GPU raises it too): a NameError or an
/// UnboundLocalError; an AttributeError of an object, class or module that lacks the attribute
/// ("'HalfCauchy' object has no attribute 'cuda'"), unless that object is one the shim may have
/// built in CUDA's place (its type names a device, stream, event, generator or properties, or
/// CUDA) or a module of torch or the shim (a function the shim does not carry).
bool is_own_error(std::string_view exception, std::string_view message);

/// Whether a failure is a numeric difference: what torch.testing, numpy.testing and unittest say
/// when values differ beyond a tolerance ("Tensor-likes are not close!", "Not equal to
/// tolerance", "0.79 not less than or equal to 1e-05", "... within 7 places"), or an assertion on
/// allclose/isclose. explanation: the failure's (failure_explanation).
bool is_numeric_difference(std::string_view message, std::string_view explanation);

/// The cause of one CUDA-branch failure: a timeout first, then by the gap entry its failure is
/// evidence of (gap_api and gap_kind, docs/gaps.md; empty: none): a device assertion, what only
/// CUDA has, the environment, an API not carried; an unattributed one (or none) by its text.
CudaBranchCause cuda_branch_cause(FailureKind text, std::string_view gap_api,
                                  std::string_view gap_kind);

}  // namespace devshim
