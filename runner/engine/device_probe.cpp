#include "runner/engine/device_probe.h"

#include <unistd.h>

#include "runner/engine/process_pool.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

constexpr const char* kProbeName = "devshim-probe";

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

fs::path find_device_probe(const Environment& env) {
  if (std::string probe = value_of(env, "DEVSHIM_PROBE"); !probe.empty()) return probe;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& candidate : {self.parent_path() / kProbeName,
                                      self.parent_path() / ".." / "shim" / "cpp" / kProbeName}) {
      if (executable(candidate)) return candidate.lexically_normal();
    }
  }
  const std::string on_path = find_executable(kProbeName, env);
  return on_path.empty() ? fs::path() : fs::path(on_path);
}

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
