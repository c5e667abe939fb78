// The redirection policy: a pure function of (request, hardware present, override state, policy).
//
// The C++ twin of shim/python/devshim/policy.py, specified by the same test vectors
// (shim/vectors/redirection.json, checked by tests/shim/cpp/policy_vectors_test.cpp and by
// tests/shim/test_policy.py). It knows nothing of LibTorch: requests and results are plain
// (type, index) pairs, so every cell of the table is testable anywhere with a fake Hardware.
//
// A = the best accelerator present: MPS, else CUDA, else none.
//
//   requested          | A = MPS | A = CUDA                               | no accelerator
//   no device given    | mps     | cuda                                   | cpu
//   cpu, cpu:n         | mps     | cuda                                   | cpu
//   cpu:-1             | cpu, and toggles the CPU override                                 |
//   mps, mps:n         | mps     | cuda                                   | cpu
//   cuda, cuda:n       | mps     | cuda:n if device n exists, else cuda:0 | cpu
//
// While the CPU override is on, an explicit `cpu` stays cpu. Under Policy::kAcceleratorOnly an
// explicit `cpu` always stays cpu. Device types other than cpu, cuda and mps (meta, xpu, ...) are
// never redirected. For cpu and mps an index of none and 0 are the same device, and results for
// them carry no index.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace devshim {

/// A device as (type, index): "cuda:1" is {"cuda", 1}, "cpu" is {"cpu", nullopt}.
struct DeviceRequest {
  std::string type;
  std::optional<int> index;

  /// A bare ordinal, as torch reads it: a CUDA device.
  static DeviceRequest cuda(int index) { return {"cuda", index}; }
  friend bool operator==(const DeviceRequest&, const DeviceRequest&) = default;
};

/// The policies TORCHDEVICE_POLICY selects.
enum class Policy {
  kDefault,          ///< "default": the table above
  kAcceleratorOnly,  ///< "accelerator-only": an explicit cpu stays cpu
};

/// "default" / "accelerator-only".
const char* policy_name(Policy policy);

/// Parses a policy name (exact, as written above). Throws std::invalid_argument naming the value
/// and the accepted names when it is neither.
Policy parse_policy(std::string_view name);

/// What the machine has. MPS wins over CUDA when both are present.
struct Hardware {
  bool mps = false;
  int cuda_device_count = 0;

  /// "mps", "cuda", or nullopt when there is no accelerator.
  std::optional<std::string> accelerator() const;
  friend bool operator==(const Hardware&, const Hardware&) = default;
};

/// Where a request lands, the CPU override state after the call, and why (for logs and records).
struct Decision {
  DeviceRequest device;
  bool override = false;
  std::string reason;  ///< never empty

  std::string device_str() const;
};

/// Parses "cuda:1", "cpu", " mps " (surrounding whitespace ignored), "cpu:-1", "meta".
/// Never returns nullopt for a string: "no device given" is the caller's nullopt. Throws
/// std::invalid_argument ("not a device: 'cuda:x'") for an empty type or a non-integer index.
DeviceRequest parse_device(std::string_view spec);

/// "cuda:1", "cpu": the inverse of parse_device.
std::string format_device(const DeviceRequest& device);

/// The device a request lands on; nullopt means "no device given". Pure: the caller keeps the
/// override state and passes it back in on the next call. Never throws.
Decision resolve(const std::optional<DeviceRequest>& requested, const Hardware& hardware,
                 bool override = false, Policy policy = Policy::kDefault);

}  // namespace devshim
