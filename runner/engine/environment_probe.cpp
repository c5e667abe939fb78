#include "runner/engine/environment_probe.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "runner/engine/process_pool.h"

#ifndef DEVSHIM_VERSION
#define DEVSHIM_VERSION "0.0.0"
#endif

namespace devshim {

namespace {

constexpr const char* kProbe = R"py(
import json, os, platform, sys
info = {"python": platform.python_version(), "executable": sys.executable,
        "platform": platform.platform()}
try:
    import torch
    info["torch"] = torch.__version__
    info["cuda_available"] = bool(torch.cuda.is_available())
    info["cuda_device_count"] = int(torch.cuda.device_count()) if info["cuda_available"] else 0
    mps = getattr(torch.backends, "mps", None)
    info["mps_available"] = bool(mps is not None and mps.is_available())
except Exception as e:
    info["torch"] = None
    info["torch_error"] = "%s: %s" % (type(e).__name__, e)
shim = sys.modules.get("devshim")
info["shim"] = None
if shim is not None:
    st = shim.status()
    info["shim"] = {"name": "devshim", "version": getattr(shim, "__version__", "?"),
                    "active": bool(st.get("active")),
                    "policy": st.get("policy") or os.environ.get("TORCHDEVICE_POLICY", "default"),
                    "cuda_lands_on": st.get("cuda_lands_on"),
                    "masquerading": bool(st.get("masquerading")),
                    "device_objects": st.get("device_objects")}
    hw = st.get("hardware")
    if hw and info.get("torch"):
        # Under the shim torch.cuda answers for the device used; report the hardware itself.
        info["cuda_device_count"] = int(hw.get("cuda_device_count") or 0)
        info["cuda_available"] = info["cuda_device_count"] > 0
        info["mps_available"] = bool(hw.get("mps"))
# The shim's settings as the test processes get them (docs/shim.md, "Environment").
info["shim_settings"] = {k: v for k, v in os.environ.items() if k.startswith("TORCHDEVICE_")}
print(json.dumps(info))
)py";

}  // namespace

std::string probe_environment(const std::string& python, const Environment& env,
                              const std::filesystem::path& cwd) {
  nlohmann::json info = nlohmann::json::object();
  auto out = capture_output({python, "-c", kProbe}, cwd, std::chrono::seconds(120), env);
  if (out) {
    // The probe prints one JSON line last; anything before it is noise from sitecustomize.
    auto start = out->rfind("\n{");
    std::string line = start == std::string::npos ? *out : out->substr(start + 1);
    info = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!info.is_object()) info = {{"probe_error", "unreadable probe output"}};
  } else {
    info["probe_error"] = "the interpreter could not run the probe";
  }
  info["cores"] = std::max(1U, std::thread::hardware_concurrency());
  info["runner_version"] = DEVSHIM_VERSION;
  return info.dump();
}

}  // namespace devshim
