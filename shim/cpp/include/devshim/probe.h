// The device probe: what LibTorch sees on this machine, and what the shim would do with it.
// `devshim-probe` prints it; the runner runs that executable (it never links LibTorch itself)
// for `runner devices` and to store the environment of each run. Format: docs/shim-cpp.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace devshim {

/// The "probe" value of the JSON document.
inline constexpr const char* kProbeFormat = "devshim-probe/1";

struct CudaDeviceInfo {
  int index = 0;
  std::string name;                               ///< empty when the CUDA driver could not be asked
  std::int64_t total_memory = 0;                  ///< bytes; 0 when unknown
  std::optional<std::pair<int, int>> capability;  ///< (major, minor)
};

/// Which dtypes a tiny matmul runs in on one device, and the dtype to use there.
struct DeviceDtypes {
  std::string device;  ///< "cpu", "cuda:0", "mps"
  bool float32 = false;
  bool float16 = false;
  bool bfloat16 = false;
  /// bfloat16 where it runs, else float16 on accelerators; float32 on the CPU.
  std::string recommended_dtype;
};

/// What the shim would do here, from the environment (devshim/config.h).
struct ProbePolicy {
  bool activated = false;                  ///< ACTIVATE_TORCH_DEVICE
  std::optional<std::string> policy;       ///< "default", "accelerator-only"; nullopt on error
  std::optional<std::string> accelerator;  ///< "mps", "cuda", nullopt
  std::string mode;                        ///< "inactive", "passthrough", "redirect"
  std::string cuda_redirects_to;           ///< where a "cuda" request lands: "cpu", "mps", "cuda"
  std::string error;                       ///< a ShimConfigError's message, else empty
};

/// The LibTorch this process loaded, asked at run time: the probe is compiled against one torch's
/// headers (torch_built_against) and runs with whichever torch the environment has.
struct LoadedLibTorch {
  /// The loaded torch's version: its package's torch/version.py ("2.14.1+cu130") or a LibTorch
  /// archive's build-version file beside the library, else the library's own ABI version
  /// (aoti_torch_abi_version(): "2.14.1"); empty when none of them can be read, never the headers'.
  std::string version;
  std::string abi_version;  ///< "MAJOR.MINOR.PATCH" from aoti_torch_abi_version(), or empty
  std::string library;      ///< path of the loaded libtorch_cpu, or empty when dladdr cannot tell
};

/// Which LibTorch this process has loaded (dladdr on one of its functions, then the files beside
/// it). Never throws.
LoadedLibTorch loaded_libtorch();

/// The version a torch/version.py ("__version__ = '2.14.1+cu130'") or a build-version file
/// ("2.14.1+cpu") names, or empty.
std::string version_in_file_text(const std::string& text);

struct Probe {
  std::string torch_version;        ///< of the loaded LibTorch (LoadedLibTorch::version)
  std::string torch_abi_version;    ///< LoadedLibTorch::abi_version
  std::string torch_library;        ///< LoadedLibTorch::library
  std::string torch_built_against;  ///< of the LibTorch headers compiled against: "2.13.0"
  bool cuda_available = false;
  int cuda_device_count = 0;
  std::vector<CudaDeviceInfo> cuda_devices;
  bool mps_available = false;
  unsigned cpu_threads = 0;           ///< std::thread::hardware_concurrency()
  int intra_op_threads = 0;           ///< at::get_num_threads()
  std::vector<DeviceDtypes> devices;  ///< cpu, then cuda:0..n-1, then mps
  ProbePolicy policy;
};

/// Asks LibTorch (and, for CUDA device names, memory and capability, the CUDA driver through
/// dlopen). Runs a 4x4 matmul per device and dtype. Never throws: what fails is reported as
/// false / empty / `policy.error`.
Probe probe();

/// The probe as JSON ({"probe": "devshim-probe/1", ...}); indent < 0: one line.
std::string to_json(const Probe& probe, int indent = 2);

/// The probe as a short human-readable table.
std::string to_text(const Probe& probe);

}  // namespace devshim
