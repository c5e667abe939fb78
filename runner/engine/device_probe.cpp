#include "runner/engine/device_probe.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <utility>

#include "runner/engine/install_layout.h"
#include "runner/engine/process_pool.h"

namespace devshim {

namespace fs = std::filesystem;

#if !defined(DEVSHIM_TORCH_OLDEST) || !defined(DEVSHIM_TORCH_NEWEST)
#error "DEVSHIM_TORCH_OLDEST and DEVSHIM_TORCH_NEWEST come from CMakeLists.txt"
#endif

namespace {

/// (major, minor) of "2.14.1+cu130" or "2.13", or nullopt.
std::optional<std::pair<int, int>> major_minor(std::string_view version) {
  int major = 0;
  int minor = 0;
  const char* end = version.data() + version.size();
  auto [p, ec] = std::from_chars(version.data(), end, major);
  if (ec != std::errc() || p == end || *p != '.') return std::nullopt;
  auto [q, ec2] = std::from_chars(p + 1, end, minor);
  if (ec2 != std::errc()) return std::nullopt;
  if (q != end && *q != '.' && *q != '+') return std::nullopt;
  return std::pair{major, minor};
}

}  // namespace

std::string supported_torch_range() {
  return fmt::format("{}\u2013{}", DEVSHIM_TORCH_OLDEST, DEVSHIM_TORCH_NEWEST);
}

bool torch_release_supported(std::string_view version) {
  const auto v = major_minor(version);
  const auto oldest = major_minor(DEVSHIM_TORCH_OLDEST);
  const auto newest = major_minor(DEVSHIM_TORCH_NEWEST);
  return v && oldest && newest && *oldest <= *v && *v <= *newest;
}

nlohmann::json with_torch_support(nlohmann::json device_probe, const nlohmann::json& python) {
  std::string torch;
  std::string source;
  if (!device_probe.contains("probe_error")) {
    if (auto v = device_probe.find("torch_version"); v != device_probe.end() && v->is_string()) {
      torch = v->get<std::string>();
      source = "probe";
    }
  } else if (python.is_object()) {
    if (auto v = python.find("torch"); v != python.end() && v->is_string()) {
      torch = v->get<std::string>();
      source = "python";
    }
  }
  if (torch.empty()) return device_probe;
  device_probe["torch_support"] = {{"range", supported_torch_range()},
                                   {"torch", torch},
                                   {"source", source},
                                   {"supported", torch_release_supported(torch)}};
  return device_probe;
}

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
