// devshim for LibTorch programs: CUDA-written C++ code runs on the hardware that is present.
//
//   #include <devshim/devshim.h>
//   auto x = torch::zeros({2, 3}, devshim::options(torch::kCUDA));   // cuda, mps or cpu
//   auto y = devshim::to(torch::ones({3}), torch::kCUDA);
//   torch::nn::Linear net(3, 1);
//   devshim::to(net, torch::kCUDA);
//
// Every helper asks the process's Shim (global_shim()) where the request lands. While
// ACTIVATE_TORCH_DEVICE is off, and on a CUDA machine without TORCH_ALLOW_REDIRECTS, the request
// is returned unchanged, so the program behaves exactly as if written with plain LibTorch. The
// helpers count every rewritten request under their call site (the `site` default argument:
// the caller's line) for the redirection record (devshim/record.h).
//
// Errors: a helper throws ShimConfigError when TORCHDEVICE_POLICY is set to an unknown value
// (on every call until it is fixed), std::invalid_argument for a malformed device string while
// active, and whatever LibTorch throws (c10::Error) for a device LibTorch cannot use.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/TensorOptions.h>

#include <source_location>
#include <string_view>
#include <type_traits>

#include "devshim/config.h"
#include "devshim/policy.h"
#include "devshim/record.h"
#include "devshim/shim.h"

namespace devshim {

/// The process's shim. The first call reads the environment (config_from_environment) and,
/// when TORCHDEVICE_RECORD is set, registers an atexit handler that merges the record into that
/// file (Shim::write_record_now). The hardware is detect_hardware()'s, asked on first need.
/// Throws ShimConfigError when the environment cannot be used; a later call tries again.
Shim& global_shim();

/// The hardware LibTorch sees: at::hasMPS(), and torch::cuda::device_count() when
/// torch::cuda::is_available().
Hardware detect_hardware();

/// c10::Device -> (type, index): {kCUDA, 1} -> {"cuda", 1}; an index of -1 is none.
DeviceRequest to_request(c10::Device device);

/// Where `requested` lands. Returns `requested` itself when it stands (see above).
/// A c10::Device cannot say cpu:-1 (that toggle needs the string form).
c10::Device device(c10::Device requested,
                   const std::source_location& site = std::source_location::current());

/// Where a device string ("cuda:1", "cpu:-1", "mps") lands. Active: parsed with parse_device
/// (std::invalid_argument when malformed); otherwise parsed by LibTorch, unchanged.
c10::Device device(std::string_view requested,
                   const std::source_location& site = std::source_location::current());

/// TensorOptions for a factory function called without a device: the accelerator present when
/// redirecting (cuda or mps), otherwise TensorOptions() (LibTorch's default device).
c10::TensorOptions options(const std::source_location& site = std::source_location::current());

/// TensorOptions().device(device(requested)).
c10::TensorOptions options(c10::Device requested,
                           const std::source_location& site = std::source_location::current());
c10::TensorOptions options(std::string_view requested,
                           const std::source_location& site = std::source_location::current());

/// tensor.to(device(requested)): the tensor itself when it is already there.
at::Tensor to(const at::Tensor& tensor, c10::Device requested,
              const std::source_location& site = std::source_location::current());
at::Tensor to(const at::Tensor& tensor, std::string_view requested,
              const std::source_location& site = std::source_location::current());

namespace detail {

/// device(), counted under `api`.
c10::Device resolve(c10::Device requested, const char* api, const std::source_location& site);
c10::Device resolve(std::string_view requested, const char* api, const std::source_location& site);

/// A torch::nn::Module (`m.to(d)`), a ModuleHolder such as torch::nn::Linear, or a
/// std::shared_ptr<Module> (`m->to(d)`); never a tensor.
template <typename M>
concept MovableModule = !std::is_same_v<std::remove_cvref_t<M>, at::Tensor> &&
                        (
                            requires(M & m, c10::Device d) { m.to(d); } ||
                            requires(M & m, c10::Device d) { m->to(d); });

template <typename M>
void move_module(M& module, c10::Device used) {
  if constexpr (requires { module->to(used); }) {
    module->to(used);
  } else {
    module.to(used);
  }
}

}  // namespace detail

/// Moves every parameter and buffer of `module` to device(requested); returns that device.
template <typename M>
requires detail::MovableModule<M> c10::Device to(
    M&& module, c10::Device requested,
    const std::source_location& site = std::source_location::current()) {
  const c10::Device used = detail::resolve(requested, "devshim::to(Module)", site);
  detail::move_module(module, used);
  return used;
}

template <typename M>
requires detail::MovableModule<M> c10::Device to(
    M&& module, std::string_view requested,
    const std::source_location& site = std::source_location::current()) {
  const c10::Device used = detail::resolve(requested, "devshim::to(Module)", site);
  detail::move_module(module, used);
  return used;
}

}  // namespace devshim
