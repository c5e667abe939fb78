// The device probe (shim/cpp: devshim-probe) seen from the runner. The runner never links
// LibTorch, so commands that do not need it start fast; it runs the probe as a subprocess when it
// wants to know the hardware (`runner devices`, the environment stored with every run).
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "runner/engine/launch_plan.h"

namespace devshim {

/// Runs `devshim-probe --json` with env and returns its JSON object (docs/shim-cpp.md), or
/// {"probe_error": "..."} when there is no probe or it fails; never throws for the probe's own
/// failures.
nlohmann::json run_device_probe(const Environment& env,
                                std::chrono::milliseconds timeout = std::chrono::seconds(60));

/// The torch releases devshim supports, "2.13–2.15": devshim-probe is built against the oldest and
/// checked on each (DEVSHIM_TORCH_OLDEST and DEVSHIM_TORCH_NEWEST, set once in CMakeLists.txt;
/// docs/install.md#torch-releases).
std::string supported_torch_range();

/// Whether a torch version ("2.14.1+cu130", "2.15.0") is one of those releases; false for text
/// that is no version.
bool torch_release_supported(std::string_view version);

/// device_probe (run_device_probe's answer) with "torch_support" added: {"range", "torch",
/// "source", "supported"}. The torch judged is the LibTorch the probe loaded (source "probe"); when
/// the probe did not run, the torch of the interpreter's probe (python: its "torch", source
/// "python"); with neither, no "torch_support" is added.
nlohmann::json with_torch_support(nlohmann::json device_probe, const nlohmann::json& python);

}  // namespace devshim
