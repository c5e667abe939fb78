// The LibTorch side of the shim: the process's Shim, hardware detection, and the helpers.
#include "devshim/devshim.h"

#include <ATen/Context.h>
#include <pthread.h>
#include <torch/cuda.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace devshim {

namespace {

std::atomic<Shim*> g_shim{nullptr};

void write_record_at_exit() {
  if (Shim* shim = g_shim.load()) shim->write_record_now();
}

void before_fork() { g_shim.load()->before_fork(); }
void after_fork_in_parent() { g_shim.load()->after_fork_in_parent(); }
void after_fork_in_child() { g_shim.load()->after_fork_in_child(); }

c10::Device to_c10(const Decision& decision) { return c10::Device(decision.device_str()); }

}  // namespace

Shim& global_shim() {
  // Leaked on purpose: the atexit handler and other static destructors may still use it.
  static Shim* const instance = [] {
    auto* shim = new Shim(config_from_environment(), detect_hardware);
    g_shim.store(shim);
    std::atexit(write_record_at_exit);
    ::pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    return shim;
  }();
  return *instance;
}

Hardware detect_hardware() {
  Hardware hw;
  hw.mps = at::hasMPS();
  hw.cuda_device_count =
      torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  return hw;
}

DeviceRequest to_request(c10::Device device) {
  DeviceRequest request{c10::DeviceTypeName(device.type(), /*lower_case=*/true), std::nullopt};
  if (device.has_index()) request.index = device.index();
  return request;
}

namespace detail {

c10::Device resolve(c10::Device requested, const char* api, const std::source_location& site) {
  Shim& shim = global_shim();
  const auto decision = shim.redirect(to_request(requested), api, site);
  return decision ? to_c10(*decision) : requested;
}

c10::Device resolve(std::string_view requested, const char* api, const std::source_location& site) {
  Shim& shim = global_shim();
  if (shim.mode() != ShimMode::kRedirect) return c10::Device(std::string(requested));
  const DeviceRequest request = parse_device(requested);
  const auto decision = shim.redirect(request, api, site);
  return c10::Device(decision ? decision->device_str() : format_device(request));
}

}  // namespace detail

c10::Device device(c10::Device requested, const std::source_location& site) {
  return detail::resolve(requested, "devshim::device", site);
}

c10::Device device(std::string_view requested, const std::source_location& site) {
  return detail::resolve(requested, "devshim::device", site);
}

c10::TensorOptions options(const std::source_location& site) {
  const auto decision = global_shim().redirect(std::nullopt, "devshim::options", site);
  return decision ? c10::TensorOptions().device(to_c10(*decision)) : c10::TensorOptions();
}

c10::TensorOptions options(c10::Device requested, const std::source_location& site) {
  return c10::TensorOptions().device(detail::resolve(requested, "devshim::options", site));
}

c10::TensorOptions options(std::string_view requested, const std::source_location& site) {
  return c10::TensorOptions().device(detail::resolve(requested, "devshim::options", site));
}

at::Tensor to(const at::Tensor& tensor, c10::Device requested, const std::source_location& site) {
  return tensor.to(detail::resolve(requested, "devshim::to", site));
}

at::Tensor to(const at::Tensor& tensor, std::string_view requested,
              const std::source_location& site) {
  return tensor.to(detail::resolve(requested, "devshim::to", site));
}

}  // namespace devshim
