#include "runner/engine/device_probe.h"

#include <fmt/format.h>

#include "runner/engine/install_layout.h"
#include "runner/engine/process_pool.h"

namespace devshim {

namespace fs = std::filesystem;

nlohmann::json run_device_probe(const Environment& env, std::chrono::milliseconds timeout) {
  const fs::path probe = find_device_probe(env);
  if (probe.empty()) {
    return {{"probe_error",
             "devshim-probe not found (build it with the project's CMake, or set DEVSHIM_PROBE)"}};
  }
  auto out = capture_output({probe.string(), "--json"}, fs::current_path(), timeout, env);
  if (!out) {
    // Why, in the probe's own words: most often the loader's, when the LibTorch it was built
    // against is not where it looks (an installed probe with another torch, or none).
    const CapturedProcess again =
        capture_process({probe.string(), "--json"}, fs::current_path(), timeout, env,
                        /*with_stderr=*/true);
    std::string why = again.timed_out ? "timed out" : !again.started ? again.error : "failed";
    if (again.exit_code) why = fmt::format("exited with {}", *again.exit_code);
    if (again.signal) why = "ended by " + signal_name(*again.signal);
    std::string said = again.output;
    while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
    if (const auto nl = said.rfind('\n'); nl != std::string::npos) said.erase(0, nl + 1);
    if (said.size() > 300) said = said.substr(0, 300) + "...";
    return {{"probe_error", probe.string() + " " + why + (said.empty() ? "" : ": " + said)},
            {"probe_path", probe}};
  }
  nlohmann::json j = nlohmann::json::parse(*out, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return {{"probe_error", probe.string() + " printed no JSON object"}, {"probe_path", probe}};
  }
  j["probe_path"] = probe.string();
  return j;
}

}  // namespace devshim
