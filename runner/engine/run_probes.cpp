#include "runner/engine/run_probes.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "runner/engine/device_probe.h"
#include "runner/engine/environment_probe.h"
#include "runner/engine/process_pool.h"

namespace devshim {

GitCheckout SystemProbes::git_checkout(const std::filesystem::path& project_root) {
  GitCheckout checkout;
  if (auto head = capture_output({"git", "rev-parse", "HEAD", "--show-toplevel"}, project_root,
                                 std::chrono::seconds(10), env_)) {
    std::istringstream lines(*head);
    std::getline(lines, checkout.commit);
    std::getline(lines, checkout.toplevel);
  }
  return checkout;
}

std::future<nlohmann::json> SystemProbes::start_environment(
    const std::string& interpreter, const Environment& env,
    const std::filesystem::path& project_root) {
  // The interpreter's probe imports torch (seconds): it runs beside the tests.
  std::future<std::string> python =
      interpreter.empty()
          ? std::async(std::launch::deferred,
                       [] {
                         return nlohmann::json{
                             {"python", nullptr},
                             {"cores", std::max(1U, std::thread::hardware_concurrency())},
                             {"runner_version", DEVSHIM_VERSION}}
                             .dump();
                       })
          : std::async(std::launch::async, probe_environment, interpreter, env, project_root);
  // And LibTorch's view of the hardware, from devshim-probe (the runner does not link LibTorch).
  std::future<nlohmann::json> device = std::async(
      std::launch::async, [env] { return run_device_probe(env, std::chrono::seconds(60)); });
  return std::async(std::launch::deferred,
                    [python = std::move(python), device = std::move(device)]() mutable {
                      nlohmann::json found = nlohmann::json::parse(python.get());
                      found["device_probe"] = with_torch_support(device.get(), found);
                      return found;
                    });
}

}  // namespace devshim
