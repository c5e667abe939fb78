// `runner devices`: what hardware and software a run would use, from the LibTorch device probe
// (devshim-probe) and from the suite's Python interpreter (docs/cli.md#runner-devices).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace devshim {

struct DevicesOptions {
  std::optional<std::filesystem::path> suite;  ///< its python, env and project root
  std::string python;                          ///< overrides the suite's (as a run's --python)
  bool json = false;
};

/// The diagnostic as JSON: {"runner_version", "device_probe": {...devshim-probe...},
/// "python": {...probe_environment...}, "recommendations": [...]}. Both probes run with the
/// shim's variables set (ACTIVATE_TORCH_DEVICE=1), so the policy shown is what a run would use.
nlohmann::json devices_report(const DevicesOptions& options);

/// The interpreter devices probes without a suite or --python: the nearest .venv/bin/python
/// from the current folder up (the checkout's, as ./setup.sh makes it), else the python beside
/// the runner (a runner installed into a venv), else "python3".
std::string default_python();

/// Prints devices_report as text or JSON. Returns 0, or 1 (RuntimeError) when neither probe
/// could run; throws UsageError for a bad suite.
int devices_command(const DevicesOptions& options);

/// The line that says a torch is outside the releases devshim-probe supports (the device probe's
/// "torch_support", engine/device_probe.h), or empty when it is inside them or unknown.
std::string torch_support_line(const nlohmann::json& device_probe);

/// What to do, from the two probes: one sentence per finding.
std::vector<std::string> device_recommendations(const nlohmann::json& device_probe,
                                                const nlohmann::json& python);

}  // namespace devshim
