#include "devshim/probe.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <dlfcn.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "devshim/config.h"
#include "devshim/devshim.h"
#include "devshim/shim.h"

namespace devshim {

namespace {

/// Names, memory and capability of CUDA devices, from the driver API (libcuda.so.1), which a
/// CUDA LibTorch has loaded already; nothing is compiled against CUDA headers.
std::vector<CudaDeviceInfo> cuda_devices(int count) {
  std::vector<CudaDeviceInfo> out;
  for (int i = 0; i < count; ++i) out.push_back({i, "", 0, std::nullopt});
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) return out;
  using InitFn = int (*)(unsigned);
  using GetFn = int (*)(int*, int);
  using NameFn = int (*)(char*, int, int);
  using MemFn = int (*)(std::size_t*, int);
  using AttrFn = int (*)(int*, int, int);
  auto init = reinterpret_cast<InitFn>(::dlsym(lib, "cuInit"));
  auto get = reinterpret_cast<GetFn>(::dlsym(lib, "cuDeviceGet"));
  auto name = reinterpret_cast<NameFn>(::dlsym(lib, "cuDeviceGetName"));
  auto mem = reinterpret_cast<MemFn>(::dlsym(lib, "cuDeviceTotalMem_v2"));
  auto attr = reinterpret_cast<AttrFn>(::dlsym(lib, "cuDeviceGetAttribute"));
  constexpr int kCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  constexpr int kCapabilityMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
  if (init != nullptr && get != nullptr && init(0) == 0) {
    for (auto& info : out) {
      int dev = 0;
      if (get(&dev, info.index) != 0) continue;
      char buffer[256] = {};
      if (name != nullptr && name(buffer, sizeof buffer - 1, dev) == 0) info.name = buffer;
      std::size_t bytes = 0;
      if (mem != nullptr && mem(&bytes, dev) == 0)
        info.total_memory = static_cast<std::int64_t>(bytes);
      int major = 0;
      int minor = 0;
      if (attr != nullptr && attr(&major, kCapabilityMajor, dev) == 0 &&
          attr(&minor, kCapabilityMinor, dev) == 0) {
        info.capability = std::pair{major, minor};
      }
    }
  }
  ::dlclose(lib);
  return out;
}

bool matmul_runs(const c10::Device& device, c10::ScalarType dtype) {
  try {
    const at::Tensor a = at::ones({4, 4}, at::TensorOptions().device(device).dtype(dtype));
    const at::Tensor c =
        at::matmul(a, a).to(at::TensorOptions().device(c10::kCPU).dtype(at::kFloat));
    return c.sum().item<float>() == 64.0F;
  } catch (const std::exception&) {
    return false;
  }
}

DeviceDtypes dtypes_on(const std::string& name) {
  DeviceDtypes d;
  d.device = name;
  const c10::Device device(name);
  d.float32 = matmul_runs(device, at::kFloat);
  d.float16 = matmul_runs(device, at::kHalf);
  d.bfloat16 = matmul_runs(device, at::kBFloat16);
  if (device.is_cpu()) {
    d.recommended_dtype = "float32";
  } else if (d.bfloat16) {
    d.recommended_dtype = "bfloat16";
  } else if (d.float16) {
    d.recommended_dtype = "float16";
  } else {
    d.recommended_dtype = "float32";
  }
  return d;
}

ProbePolicy policy_here(const Hardware& hw) {
  ProbePolicy p;
  p.accelerator = hw.accelerator();
  const char* activate = std::getenv("ACTIVATE_TORCH_DEVICE");
  p.activated =
      truthy(activate != nullptr ? std::optional<std::string_view>(activate) : std::nullopt);
  try {
    const ShimConfig config = config_from_environment();
    p.policy = policy_name(config.policy);
    Shim shim(
        config, [hw] { return hw; }, [](const std::string&) {});
    p.mode = shim_mode_name(shim.mode());
    p.cuda_redirects_to =
        p.mode == "redirect"
            ? resolve(DeviceRequest{"cuda", std::nullopt}, hw, false, config.policy).device_str()
            : "cuda";
  } catch (const std::exception& e) {
    p.mode = "error";
    p.error = e.what();
  }
  return p;
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return in ? text.str() : std::string();
}

}  // namespace

std::string version_in_file_text(const std::string& text) {
  static const std::regex kPython(R"(__version__\s*=\s*['"]([0-9][^'"]*)['"])");
  static const std::regex kPlain(R"(^\s*([0-9]+\.[0-9]+\.[0-9]+\S*)\s*$)");
  std::smatch m;
  if (std::regex_search(text, m, kPython) || std::regex_match(text, m, kPlain)) return m[1].str();
  return "";
}

LoadedLibTorch loaded_libtorch() {
  LoadedLibTorch loaded;
  // aoti_torch_abi_version() is LibTorch's C entry point (2.10 and later) that answers with the
  // TORCH_ABI_VERSION of the library itself, not of the headers: looked up by name, so that a
  // LibTorch without it still loads the probe.
  using AbiVersionFn = std::uint64_t (*)();
  if (auto* abi = reinterpret_cast<AbiVersionFn>(::dlsym(RTLD_DEFAULT, "aoti_torch_abi_version"))) {
    const std::uint64_t v = abi();
    constexpr std::uint64_t kByte = 0xff;
    loaded.abi_version = std::to_string((v >> 56) & kByte) + "." +
                         std::to_string((v >> 48) & kByte) + "." +
                         std::to_string((v >> 40) & kByte);
  }
  // The library that holds at::get_num_threads is libtorch_cpu: in torch's wheel it lies in
  // torch/lib/, beside torch/version.py one folder up; in a LibTorch archive, in libtorch/lib/,
  // with libtorch/build-version.
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&at::get_num_threads), &info) != 0 &&
      info.dli_fname != nullptr) {
    std::error_code ec;
    const std::filesystem::path library = std::filesystem::canonical(info.dli_fname, ec);
    loaded.library = ec ? std::string(info.dli_fname) : library.string();
    const std::filesystem::path root =
        std::filesystem::path(loaded.library).parent_path().parent_path();
    for (const char* name : {"version.py", "build-version"}) {
      loaded.version = version_in_file_text(file_text(root / name));
      if (!loaded.version.empty()) break;
    }
  }
  if (loaded.version.empty()) loaded.version = loaded.abi_version;
  return loaded;
}

Probe probe() {
  Probe p;
  const LoadedLibTorch torch = loaded_libtorch();
  p.torch_version = torch.version;
  p.torch_abi_version = torch.abi_version;
  p.torch_library = torch.library;
  p.torch_built_against = TORCH_VERSION;
  try {
    p.cuda_available = torch::cuda::is_available();
    p.cuda_device_count = p.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
  } catch (const std::exception&) {
    p.cuda_available = false;
  }
  p.cuda_devices = cuda_devices(p.cuda_device_count);
  try {
    p.mps_available = at::hasMPS();
  } catch (const std::exception&) {
    p.mps_available = false;
  }
  p.cpu_threads = std::thread::hardware_concurrency();
  p.intra_op_threads = at::get_num_threads();
  p.devices.push_back(dtypes_on("cpu"));
  for (int i = 0; i < p.cuda_device_count; ++i)
    p.devices.push_back(dtypes_on("cuda:" + std::to_string(i)));
  if (p.mps_available) p.devices.push_back(dtypes_on("mps"));
  p.policy = policy_here(Hardware{p.mps_available, p.cuda_device_count});
  return p;
}

std::string to_json(const Probe& p, int indent) {
  using nlohmann::ordered_json;
  auto optional_string = [](const std::optional<std::string>& s) {
    return s ? ordered_json(*s) : ordered_json(nullptr);
  };
  ordered_json doc;
  doc["probe"] = kProbeFormat;
  auto string_or_null = [](const std::string& s) {
    return s.empty() ? ordered_json(nullptr) : ordered_json(s);
  };
  doc["torch_version"] = string_or_null(p.torch_version);
  doc["torch_abi_version"] = string_or_null(p.torch_abi_version);
  doc["torch_library"] = string_or_null(p.torch_library);
  doc["torch_built_against"] = p.torch_built_against;
  ordered_json cuda_devices = ordered_json::array();
  for (const auto& d : p.cuda_devices) {
    ordered_json capability = nullptr;
    if (d.capability) capability = {d.capability->first, d.capability->second};
    cuda_devices.push_back({{"index", d.index},
                            {"name", d.name},
                            {"total_memory", d.total_memory},
                            {"capability", capability}});
  }
  doc["cuda"] = {{"available", p.cuda_available},
                 {"device_count", p.cuda_device_count},
                 {"devices", cuda_devices}};
  doc["mps"] = {{"available", p.mps_available}};
  doc["cpu"] = {{"threads", p.cpu_threads}, {"intra_op_threads", p.intra_op_threads}};
  ordered_json devices = ordered_json::array();
  for (const auto& d : p.devices) {
    devices.push_back(
        {{"device", d.device},
         {"matmul", {{"float32", d.float32}, {"float16", d.float16}, {"bfloat16", d.bfloat16}}},
         {"recommended_dtype", d.recommended_dtype}});
  }
  doc["devices"] = devices;
  ordered_json policy = {{"activated", p.policy.activated},
                         {"policy", optional_string(p.policy.policy)},
                         {"accelerator", optional_string(p.policy.accelerator)},
                         {"mode", p.policy.mode},
                         {"cuda_redirects_to", p.policy.cuda_redirects_to}};
  if (!p.policy.error.empty()) policy["error"] = p.policy.error;
  doc["policy"] = policy;
  return doc.dump(indent) + "\n";
}

std::string to_text(const Probe& p) {
  std::ostringstream out;
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  out << "torch       " << (p.torch_version.empty() ? "unknown" : p.torch_version)
      << " (loaded from " << (p.torch_library.empty() ? "?" : p.torch_library) << "; built against "
      << p.torch_built_against << ")\n";
  out << "cuda        " << (p.cuda_available ? "available" : "not available");
  if (p.cuda_available) out << ", " << p.cuda_device_count << " device(s)";
  out << "\n";
  for (const auto& d : p.cuda_devices) {
    out << "  cuda:" << d.index << "    " << (d.name.empty() ? "?" : d.name);
    if (d.total_memory > 0) out << ", " << (d.total_memory >> 20) << " MiB";
    if (d.capability) out << ", capability " << d.capability->first << "." << d.capability->second;
    out << "\n";
  }
  out << "mps         " << (p.mps_available ? "available" : "not available") << "\n";
  out << "cpu         " << p.cpu_threads << " threads, " << p.intra_op_threads
      << " intra-op threads\n\n";
  out << "device    float32  float16  bfloat16  recommended\n";
  for (const auto& d : p.devices) {
    char line[128];
    std::snprintf(line, sizeof line, "%-9s %-8s %-8s %-9s %s\n", d.device.c_str(), yes(d.float32),
                  yes(d.float16), yes(d.bfloat16), d.recommended_dtype.c_str());
    out << line;
  }
  out << "\npolicy      ";
  if (!p.policy.error.empty()) {
    out << "error: " << p.policy.error << "\n";
  } else {
    out << p.policy.policy.value_or("?") << " (" << p.policy.mode << "); cuda requests go to "
        << p.policy.cuda_redirects_to << "\n";
  }
  return out.str();
}

}  // namespace devshim
