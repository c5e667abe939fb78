// What a run learns about its machine and checkout besides the tests: the git commit, the suite
// interpreter's environment and LibTorch's device probe. Behind an interface so that the run's
// steps are tested without starting git, Python or devshim-probe (runner/engine/run_steps.h).
#pragma once

#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "runner/engine/launch_plan.h"

namespace devshim {

/// The git checkout a project lives in; both empty when it is not in one.
struct GitCheckout {
  std::string commit;    ///< HEAD
  std::string toplevel;  ///< the checkout's root folder
};

class RunProbes {
 public:
  virtual ~RunProbes() = default;
  /// The checkout of project_root. Never throws for a missing git or checkout.
  virtual GitCheckout git_checkout(const std::filesystem::path& project_root) = 0;
  /// Starts probing the environment the tests run in, beside them; get() waits for it. The JSON
  /// object of probe_environment (runner/engine/environment_probe.h), or its interpreter-less form
  /// when interpreter is empty (a GoogleTest suite without Python), plus "device_probe": the object
  /// of run_device_probe (runner/engine/device_probe.h). Never throws for a probe's own failure.
  virtual std::future<nlohmann::json> start_environment(
      const std::string& interpreter, const Environment& env,
      const std::filesystem::path& project_root) = 0;
};

/// The real probes: `git rev-parse`, the interpreter's probe and devshim-probe, each a process.
class SystemProbes final : public RunProbes {
 public:
  /// env: the runner's environment (git runs with it).
  explicit SystemProbes(Environment env) : env_(std::move(env)) {}
  GitCheckout git_checkout(const std::filesystem::path& project_root) override;
  std::future<nlohmann::json> start_environment(const std::string& interpreter,
                                                const Environment& env,
                                                const std::filesystem::path& project_root) override;

 private:
  Environment env_;
};

}  // namespace devshim
