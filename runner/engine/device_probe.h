// The device probe (shim/cpp: devshim-probe) seen from the runner. The runner never links
// LibTorch, so commands that do not need it start fast; it runs the probe as a subprocess when it
// wants to know the hardware (`runner devices`, the environment stored with every run).
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "runner/engine/launch_plan.h"

namespace devshim {

/// Runs `devshim-probe --json` with env and returns its JSON object (docs/shim-cpp.md), or
/// {"probe_error": "..."} when there is no probe or it fails; never throws for the probe's own
/// failures.
nlohmann::json run_device_probe(const Environment& env,
                                std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace devshim
