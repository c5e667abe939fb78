// What the suite's own Python interpreter reports about itself, stored with every run.
#pragma once

#include <string>

#include "runner/engine/launch_plan.h"

namespace devshim {

/// Runs `python -c <probe>` with the test processes' environment (so the shim, when on, is
/// active in it) in cwd and returns a JSON object: python, executable, platform, torch (null
/// when it cannot be imported; torch_error says why), cuda_available, cuda_device_count,
/// mps_available (the hardware present, also when the shim masquerades torch.cuda), shim
/// ({name, version, active, policy, cuda_lands_on, masquerading} or null), plus cores and
/// runner_version from the runner itself. On failure: {"probe_error": "..."} with cores and
/// runner_version.
std::string probe_environment(const std::string& python, const Environment& env,
                              const std::filesystem::path& cwd);

}  // namespace devshim
