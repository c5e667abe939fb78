#include "runner/cli/devices_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "base/error.h"
#include "runner/cli/process_environment.h"
#include "runner/engine/device_probe.h"
#include "runner/engine/environment_probe.h"
#include "runner/engine/install_layout.h"
#include "runner/engine/launch_plan.h"
#include "runner/engine/run_suite.h"
#include "runner/engine/suite.h"

#ifndef DEVSHIM_VERSION
#define DEVSHIM_VERSION "0.0.0"
#endif

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// j[key] when it has type T, else fallback: the probes' output is read tolerantly.
template <typename T>
T get(const json& j, const char* key, T fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string memory_text(double bytes) {
  if (bytes <= 0) return "?";
  return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
}

void print_text(const json& r) {
  fmt::print("devshim devices (runner {})\n\n", get<std::string>(r, "runner_version", "?"));
  const json& p = r["device_probe"];
  if (p.contains("probe_error")) {
    fmt::print("LibTorch probe: unavailable: {}\n", get<std::string>(p, "probe_error", "?"));
    if (const std::string line = torch_support_line(p); !line.empty()) {
      fmt::print("  {}\n", line);
    }
  } else {
    fmt::print("LibTorch probe ({}): torch {} (loaded from {}; built against {})\n",
               get<std::string>(p, "probe_path", "?"), get<std::string>(p, "torch_version", "?"),
               get<std::string>(p, "torch_library", "?"),
               get<std::string>(p, "torch_built_against", "?"));
    if (const std::string line = torch_support_line(p); !line.empty()) {
      fmt::print("  {}\n", line);
    }
    const json cuda = p.value("cuda", json::object());
    fmt::print("  CUDA: {}", get<bool>(cuda, "available", false) ? "available" : "not available");
    fmt::print(" ({} device{})\n", get<int>(cuda, "device_count", 0),
               get<int>(cuda, "device_count", 0) == 1 ? "" : "s");
    for (const auto& d : cuda.value("devices", json::array())) {
      const json cap = d.value("capability", json::array());
      fmt::print("    cuda:{}  {}  {}  capability {}\n", get<int>(d, "index", 0),
                 get<std::string>(d, "name", "?"), memory_text(get<double>(d, "total_memory", 0)),
                 cap.size() == 2 ? fmt::format("{}.{}", cap[0].get<int>(), cap[1].get<int>())
                                 : std::string("?"));
    }
    fmt::print("  MPS:  {}\n", get<bool>(p.value("mps", json::object()), "available", false)
                                   ? "available"
                                   : "not available");
    const json cpu = p.value("cpu", json::object());
    fmt::print("  CPU:  {} threads, {} intra-op threads\n", get<int>(cpu, "threads", 0),
               get<int>(cpu, "intra_op_threads", 0));
    fmt::print("  Devices:\n");
    for (const auto& d : p.value("devices", json::array())) {
      std::string matmul;
      const json dtypes = d.value("matmul", json::object());
      for (const auto& [dtype, ok] : dtypes.items()) {
        matmul += fmt::format("{}{} {}", matmul.empty() ? "" : ", ", dtype,
                              yes_no(ok.is_boolean() && ok.get<bool>()));
      }
      fmt::print("    {:<8} matmul: {}; recommended dtype {}\n", get<std::string>(d, "device", "?"),
                 matmul, get<std::string>(d, "recommended_dtype", "?"));
    }
    const json policy = p.value("policy", json::object());
    fmt::print("  Policy: {} (shim {}): cuda requests land on {}\n",
               get<std::string>(policy, "policy", "default"),
               get<bool>(policy, "activated", false) ? "on" : "off",
               get<std::string>(policy, "cuda_redirects_to", "?"));
  }
  fmt::print("\n");
  const json& py = r["python"];
  fmt::print("Python ({}): Python {}\n", get<std::string>(py, "executable", "?"),
             get<std::string>(py, "python", "?"));
  if (py.contains("probe_error")) {
    fmt::print("  unavailable: {}\n", get<std::string>(py, "probe_error", "?"));
  } else if (get<std::string>(py, "torch", "").empty()) {
    fmt::print("  torch: not importable: {}\n", get<std::string>(py, "torch_error", "?"));
  } else {
    fmt::print("  torch {}: cuda available {} ({} devices), mps available {}\n",
               get<std::string>(py, "torch", "?"), yes_no(get<bool>(py, "cuda_available", false)),
               get<int>(py, "cuda_device_count", 0), yes_no(get<bool>(py, "mps_available", false)));
    const json shim = py.value("shim", json());
    fmt::print("  shim: {}\n",
               shim.is_object() ? fmt::format("devshim {} {} (policy {})",
                                              get<std::string>(shim, "version", "?"),
                                              get<bool>(shim, "active", false) ? "active" : "off",
                                              get<std::string>(shim, "policy", "default"))
                                : std::string("not loaded"));
  }
  fmt::print("\nRecommendations:\n");
  for (const auto& line : r["recommendations"]) fmt::print("  - {}\n", line.get<std::string>());
}

}  // namespace

std::string torch_support_line(const json& device_probe) {
  const json support = device_probe.value("torch_support", json::object());
  if (!support.is_object() || get<bool>(support, "supported", true)) return "";
  const std::string torch = get<std::string>(support, "torch", "?");
  const std::string range = get<std::string>(support, "range", "?");
  if (get<std::string>(support, "source", "") == "python") {
    return fmt::format(
        "the Python's torch {} is outside the torch releases devshim-probe supports ({}): the "
        "probe cannot load its LibTorch (docs/install.md#torch-releases)",
        torch, range);
  }
  return fmt::format(
      "torch {} is outside the torch releases devshim-probe supports ({}): the version above is "
      "the one loaded, the rest is unchecked there (docs/install.md#torch-releases)",
      torch, range);
}

std::vector<std::string> device_recommendations(const json& device_probe, const json& python) {
  std::vector<std::string> out;
  if (const std::string line = torch_support_line(device_probe); !line.empty()) {
    out.push_back(fmt::format("Install a torch of {} for the LibTorch view of the hardware: {}.",
                              get<std::string>(device_probe["torch_support"], "range", "?"), line));
  }
  if (device_probe.contains("probe_error") && !device_probe.contains("torch_support")) {
    if (!device_probe.contains("probe_path")) {
      out.emplace_back(
          "Build devshim-probe (cmake --build build) to see the LibTorch view of the hardware.");
    } else {
      // Found but not started, and no torch to judge: most often an installed probe in a venv
      // without torch, whose LibTorch it loads.
      out.push_back(fmt::format(
          "devshim-probe loads the LibTorch of the torch installed beside it: install a torch of "
          "{} there to see the LibTorch view of the hardware.",
          supported_torch_range()));
    }
  } else if (!device_probe.contains("probe_error")) {
    const bool cuda = get<bool>(device_probe.value("cuda", json::object()), "available", false);
    const bool mps = get<bool>(device_probe.value("mps", json::object()), "available", false);
    if (!cuda && !mps) {
      out.emplace_back(
          "No accelerator: under the shim, CUDA code runs on the CPU; expect float32 speed and "
          "use float32 (fp16 matmuls are slow or unsupported on CPU).");
    }
    for (const auto& d : device_probe.value("devices", json::array())) {
      const std::string dev = get<std::string>(d, "device", "?");
      const std::string dtype = get<std::string>(d, "recommended_dtype", "");
      if (dev != "cpu" && !dtype.empty()) {
        out.push_back(fmt::format("On {}, prefer {} for mixed precision.", dev, dtype));
      }
    }
    if (mps) {
      out.emplace_back(
          "MPS present: keep PYTORCH_ENABLE_MPS_FALLBACK=1 (the runner sets it) so operators "
          "MPS lacks fall back to the CPU.");
    }
  }
  if (python.contains("probe_error")) {
    out.emplace_back("The Python interpreter could not be probed: check --python / the suite.");
  } else if (get<std::string>(python, "torch", "").empty()) {
    out.emplace_back(
        "torch does not import in this Python: install torch there (pip install torch; in a "
        "checkout, ./setup.sh makes .venv).");
  } else if (!device_probe.contains("probe_error")) {
    const std::string lib = get<std::string>(device_probe, "torch_version", "");
    const std::string py = get<std::string>(python, "torch", "");
    if (!lib.empty() && py.rfind(lib, 0) != 0) {
      out.push_back(fmt::format(
          "LibTorch {} and the Python's torch {} differ: C++ and Python suites test different "
          "builds.",
          lib, py));
    }
  }
  return out;
}

std::string default_python() {
  std::error_code ec;
  for (fs::path dir = fs::current_path(ec); !ec && !dir.empty(); dir = dir.parent_path()) {
    const fs::path venv = dir / ".venv" / "bin" / "python";
    if (::access(venv.c_str(), X_OK) == 0) return venv.string();
    if (dir == dir.root_path()) break;
  }
  // An installed runner (the wheel) lies in the venv whose python it was installed with.
  if (const fs::path self = executable_path(); !self.empty()) {
    const fs::path beside = self.parent_path() / "python";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return "python3";
}

json devices_report(const DevicesOptions& o) {
  Environment env = runner_environment();
  fs::path cwd = fs::current_path();
  // As a run takes --python: a value with a slash is relative to where the runner started (the
  // probe runs in the suite's project root).
  std::string python = o.python.find('/') != std::string::npos
                           ? fs::absolute(o.python).lexically_normal().string()
                           : o.python;
  if (o.suite) {
    const Suite suite = load_suite(*o.suite, runner_environment());
    LaunchOptions launch;
    launch.shim_dir = default_shim_dir(runner_environment());
    env = child_environment(suite, launch, env);
    cwd = suite.project_root;
    if (python.empty()) python = suite.python;
  } else {
    LaunchOptions launch;
    launch.shim_dir = default_shim_dir(runner_environment());
    env = child_environment(Suite{}, launch, env);
  }
  if (python.empty()) python = default_python();
  const std::string interpreter = find_executable(python, env);
  json report = {{"runner_version", DEVSHIM_VERSION}};
  json device_probe = run_device_probe(env);
  if (interpreter.empty()) {
    report["python"] = {{"probe_error", fmt::format("python \"{}\" not found", python)}};
  } else {
    report["python"] = json::parse(probe_environment(interpreter, env, cwd), nullptr, false);
  }
  report["device_probe"] = with_torch_support(std::move(device_probe), report["python"]);
  report["recommendations"] = device_recommendations(report["device_probe"], report["python"]);
  return report;
}

int devices_command(const DevicesOptions& o) {
  const json report = devices_report(o);
  if (o.json) {
    std::printf("%s\n", report.dump(1).c_str());
  } else {
    print_text(report);
  }
  std::fflush(stdout);
  if (report["device_probe"].contains("probe_error") && report["python"].contains("probe_error")) {
    throw RuntimeError("neither the device probe nor the Python interpreter could be probed");
  }
  return kExitOk;
}

}  // namespace devshim
