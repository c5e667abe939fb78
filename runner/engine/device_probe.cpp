#include "runner/engine/device_probe.h"

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
    return {{"probe_error", probe.string() + " failed or timed out"}, {"probe_path", probe}};
  }
  nlohmann::json j = nlohmann::json::parse(*out, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return {{"probe_error", probe.string() + " printed no JSON object"}, {"probe_path", probe}};
  }
  j["probe_path"] = probe.string();
  return j;
}

}  // namespace devshim
