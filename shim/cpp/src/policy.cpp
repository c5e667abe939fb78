#include "devshim/policy.h"

#include <charconv>
#include <stdexcept>

namespace devshim {

namespace {

std::string_view trim(std::string_view s) {
  const char* ws = " \t\n\r\f\v";
  auto first = s.find_first_not_of(ws);
  if (first == std::string_view::npos) return {};
  auto last = s.find_last_not_of(ws);
  return s.substr(first, last - first + 1);
}

struct Landing {
  DeviceRequest device;
  std::string why;
};

/// Where a request for "an accelerator" (index: nullopt) or for cuda:index lands.
Landing accelerator_device(const Hardware& hw, std::optional<int> index) {
  const auto accel = hw.accelerator();
  if (accel == "mps") return {{"mps", std::nullopt}, "mps is the accelerator present"};
  if (accel == "cuda") {
    if (!index) return {{"cuda", std::nullopt}, "cuda is the accelerator present"};
    if (*index >= 0 && *index < hw.cuda_device_count)
      return {{"cuda", index}, "cuda device exists"};
    return {{"cuda", 0},
            "cuda:" + std::to_string(*index) + " does not exist (" +
                std::to_string(hw.cuda_device_count) + " devices): cuda:0"};
  }
  return {{"cpu", std::nullopt}, "no accelerator present"};
}

}  // namespace

const char* policy_name(Policy policy) {
  return policy == Policy::kAcceleratorOnly ? "accelerator-only" : "default";
}

Policy parse_policy(std::string_view name) {
  if (name == "default") return Policy::kDefault;
  if (name == "accelerator-only") return Policy::kAcceleratorOnly;
  throw std::invalid_argument("unknown policy '" + std::string(name) +
                              "' (one of default, accelerator-only)");
}

std::optional<std::string> Hardware::accelerator() const {
  if (mps) return "mps";
  if (cuda_device_count > 0) return "cuda";
  return std::nullopt;
}

std::string Decision::device_str() const { return format_device(device); }

DeviceRequest parse_device(std::string_view spec) {
  const std::string_view text = trim(spec);
  const auto colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  auto bad = [&] { return std::invalid_argument("not a device: '" + std::string(spec) + "'"); };
  if (kind.empty()) throw bad();
  if (colon == std::string_view::npos) return {std::string(kind), std::nullopt};
  const std::string_view digits = text.substr(colon + 1);
  int index = 0;
  const char* end = digits.data() + digits.size();
  // Like Python's int(): an optional '-' then digits only.
  const bool shaped =
      !digits.empty() && digits.find_first_not_of("-0123456789") == std::string_view::npos;
  auto [ptr, ec] = std::from_chars(digits.data(), end, index);
  if (!shaped || ec != std::errc() || ptr != end) throw bad();
  return {std::string(kind), index};
}

std::string format_device(const DeviceRequest& device) {
  return device.index ? device.type + ":" + std::to_string(*device.index) : device.type;
}

Decision resolve(const std::optional<DeviceRequest>& requested, const Hardware& hardware,
                 bool override, Policy policy) {
  if (!requested) {
    auto [device, why] = accelerator_device(hardware, std::nullopt);
    return {device, override, "no device given: " + why};
  }
  const auto& [kind, index] = *requested;
  if (kind != "cpu" && kind != "cuda" && kind != "mps") {
    return {*requested, override, kind + " is never redirected"};
  }
  if (kind == "cpu") {
    if (index == -1) {
      return {{"cpu", std::nullopt},
              !override,
              std::string("cpu:-1 toggles the CPU override ") + (override ? "off" : "on")};
    }
    if (override) return {{"cpu", std::nullopt}, override, "CPU override is on"};
    if (policy == Policy::kAcceleratorOnly) {
      return {{"cpu", std::nullopt}, override, "accelerator-only policy keeps cpu"};
    }
    auto [device, why] = accelerator_device(hardware, std::nullopt);
    return {device, override, "cpu requested: " + why};
  }
  if (kind == "mps") {
    auto [device, why] = accelerator_device(hardware, std::nullopt);
    return {device, override, "mps requested: " + why};
  }
  auto [device, why] = accelerator_device(hardware, index);
  return {device, override, "cuda requested: " + why};
}

}  // namespace devshim
