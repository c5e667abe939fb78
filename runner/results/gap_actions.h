// What to do about each entry of the API gap log (docs/gaps.md, "What to do"): an action, the
// equivalent on the device used where one exists, and the documented shim setting that may fix
// it (which `--try-settings` tries). One table, gap_actions.cpp, holds them all as data.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace devshim {

/// The shim's settings a run used, from its environment (runs.environment: the probe of the
/// suite's interpreter, runner/engine/environment_probe.cpp).
struct ShimSettings {
  /// Where the shim sends CUDA requests ("cpu", "mps"); empty when the run does not say.
  std::string device;
  /// Each setting's value as the run's shim used it ("TORCHDEVICE_DEVICE_OBJECTS" → "keep"):
  /// the shim's own status first, else the variable as the test processes had it; absent when
  /// neither says (then the shim's default, which the runner does not assume).
  std::map<std::string, std::string> values;

  /// The value of variable, or empty when the run does not say.
  std::string value(std::string_view variable) const;
};

/// The settings in a run's environment JSON object (anything else: none known).
ShimSettings shim_settings_of(const nlohmann::json& environment);

/// What to do about one entry.
struct GapAction {
  std::string action;      ///< never empty
  std::string equivalent;  ///< the API or value to use on the device used; empty: none known
  /// "VARIABLE=value": a setting of docs/shim.md that may fix the entry and that the run did not
  /// use; empty when no documented setting helps (or the run used it already).
  std::string setting;
  /// Nothing the shim could carry or change fixes the entry: one device cannot give what the
  /// tests expect (an error for tensors on two devices, CUDA's own errors, a CUDA extension), or
  /// the failure is not the shim's (a port in use, the network out of reach). Its severity is
  /// at most medium.
  bool beyond_the_shim = false;
};

/// Whether an entry of kind and api is beyond the shim (GapAction::beyond_the_shim), without
/// writing its action.
bool gap_beyond_the_shim(std::string_view kind, std::string_view api);

/// Whether an entry of kind and api is the tests' own: what they check or raise (a tensor's device
/// type, CUDA's own errors, an error their own code raises on any device) no change of the shim
/// or of its settings makes pass. Its severity is low, however many tests it holds.
bool gap_tests_own(std::string_view kind, std::string_view api);

/// The action for an entry of kind and api (attributed: the torch API a file error's traceback
/// points at, attribute_failure; else empty), for a run with settings.
GapAction gap_action(std::string_view kind, std::string_view api, std::string_view attributed,
                     const ShimSettings& settings);

}  // namespace devshim
