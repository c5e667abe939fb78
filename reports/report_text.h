// The wording the renderers share (markdown.h, html.h): the sentences report.md and report.html
// both print about a run's differential, its versions, its start and its device probe. The
// model (report.h) holds the facts; each sentence is worded once here.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/report.h"

namespace devshim {

/// What the reports say of the tests new under the shim: how many, what they are, how many
/// pass, fail and skip; "" when there are none.
std::string new_under_shim_text(const ReportDifferential& d);

/// regressions_by_gap as a sentence, each entry's name through `name` (a format's escaping):
/// "By gap entry (...): 9 tensor.device type check, 2 in no entry."
std::string regressions_by_gap_text(
    const ReportDifferential& d, const std::function<std::string(const std::string&)>& name =
                                     [](const std::string& s) { return s; });

/// What the Regressions heading says of the renumbered tests (not compared); "" when none.
std::string renumbered_text(const ReportDifferential& d);

/// The Regressions heading's sentence when no test is listed as a regression: lost tests,
/// renumbered ones that must have regressed, nothing compared, or none at all.
std::string no_listed_regression_text(const ReportDifferential& d);

/// How the tests did that passed without the shim and took a CUDA path with it (cuda_branch_passed
/// and cuda_branch_failed), the failures by cause: "CUDA branches that ran only under the shim: 70
/// pass, 34 fail (asserts a CUDA device: 32, the test's own error (any device): 2)."; "" when
/// none.
std::string cuda_branches_text(const ReportDifferential& d);

/// One line of what a report says first: a bold head (may be empty) and the rest.
struct GlanceLine {
  std::string head, rest;
};

/// What report.md and report.html say first, at a glance: the regressions against the baseline
/// (code that ran both ways: the shim's), the CUDA branches that ran only under the shim
/// (cuda_branches_text), the unlocked tests, the CUDA path (cuda_path_text), and why upstream
/// links are missing (Report::link_note), each when the run has it.
std::vector<GlanceLine> glance_lines(const Report& r);

/// The Regressions heading's sentence when the baseline passed no test (baseline_passed == 0):
/// "no regression" would then be vacuous.
std::string nothing_compared_text(const ReportDifferential& d);

/// The meaning of a differential class as the reports show it: `meaning`, and for newly_skipped
/// how many of them skip because the masquerade says a GPU is there (when any do).
std::string differential_meaning(const ReportDifferential& d, const std::string& cls,
                                 const std::string& meaning);

/// How the reports name a later run's relation: "compared with this run", "shim run with this
/// baseline".
std::string later_relation_text(const std::string& relation);

/// The sentence the reports show for report.other_versions (names both runs' versions and the
/// `runner report --against` command); empty when it is not set.
std::string other_versions_text(const Report& report);

/// How a run's test files started, from its environment's "start" (runner/engine/run_steps.h):
/// "warm (torch, pytest preloaded in 4.6 s)", "cold (--cold)", or empty for a run that recorded
/// none (before the warm start, or imported).
std::string start_mode_text(const nlohmann::json& environment);

/// One line on the LibTorch device probe stored in the run's environment ("device_probe"):
/// "LibTorch 2.13.0 · cpu: float32 recommended (matmul bfloat16, float16, float32) · cuda → cpu",
/// "unavailable: <why>", or empty when the run has no probe result; a torch outside the releases
/// devshim-probe supports (the probe's "torch_support") is named first.
std::string device_probe_text(const nlohmann::json& environment);

}  // namespace devshim
