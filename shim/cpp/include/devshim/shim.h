// Where device requests land in this process: the policy (devshim/policy.h) bound to the settings
// (devshim/config.h), the hardware and the CPU override state, with the redirection record and
// the log. Knows nothing of LibTorch: the hardware comes from a function the owner passes in, so
// tests use a fake one. devshim/devshim.h holds the process's instance and the LibTorch helpers.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "devshim/config.h"
#include "devshim/policy.h"
#include "devshim/record.h"

namespace devshim {

/// Receives one finished log line ("devshim INFO: ..."), without a newline.
using LogSink = std::function<void(const std::string& line)>;

/// A LogSink that writes the line and a newline to stderr in one call.
void log_to_stderr(const std::string& line);

/// What the shim does with requests.
enum class ShimMode {
  kInactive,     ///< ACTIVATE_TORCH_DEVICE is off: every request stands as it is
  kPassthrough,  ///< active on a CUDA machine without TORCH_ALLOW_REDIRECTS: CUDA code runs as
                 ///< written, every request stands as it is
  kRedirect,     ///< the policy decides
};

/// "inactive", "passthrough", "redirect".
const char* shim_mode_name(ShimMode mode);

/// True when a and b name the same device (for cpu and mps, an index of none and 0 are the same).
bool same_device(const DeviceRequest& a, const DeviceRequest& b);

/// The shim's state. Thread-safe: every member may be called from any thread.
class Shim {
 public:
  using HardwareProbe = std::function<Hardware()>;

  /// `probe_hardware` is called once, on the first call that needs the hardware (never while
  /// inactive); `log` receives the lines at or above config.log_level (default: stderr).
  /// config.problems are logged at ERROR at once.
  Shim(ShimConfig config, HardwareProbe probe_hardware, LogSink log = log_to_stderr);
  ~Shim();
  Shim(const Shim&) = delete;
  Shim& operator=(const Shim&) = delete;

  ShimConfig config() const;

  /// The hardware (probed on first call).
  Hardware hardware();

  /// The mode that config and hardware give (probes the hardware unless inactive).
  ShimMode mode();

  /// Where `requested` (nullopt: no device given) lands when `api` is called from `site`.
  /// nullopt: the request stands as it is — the shim is inactive or passing through, or the
  /// policy's answer is the requested device itself (cpu:0 and cpu alike). Otherwise the
  /// decision: the CPU override state is updated, the call is counted in the record under
  /// (site, api, requested -> used), and a new record row is logged at INFO.
  /// `api` must have static storage (a string literal). Never throws.
  std::optional<Decision> redirect(const std::optional<DeviceRequest>& requested, const char* api,
                                   const std::source_location& site);

  /// The CPU override state (toggled by requests of cpu:-1).
  bool cpu_override() const;

  /// The record's rows so far.
  std::vector<RecordEntry> record() const;

  /// pid, policy and hardware (probed unless inactive) for the record.
  RecordHeader record_header();

  /// When active and config().record_path is set, merges the record into that file
  /// (devshim::write_record). Returns true when written, false when there was nothing to do or
  /// writing failed (then an ERROR line is logged). Never throws: it runs at exit.
  bool write_record_now();

  /// Replaces the settings and the hardware probe; forgets the hardware, the override state
  /// and the record. For tests and for programs that configure the shim themselves.
  void reset(ShimConfig config, HardwareProbe probe_hardware);

  /// pthread_atfork handlers (global_shim() installs them): hold the locks across fork(); the
  /// child starts with zero counts, so nothing is counted twice when both write the record.
  void before_fork();
  void after_fork_in_parent();
  void after_fork_in_child();

  /// Logs `message` at `level` when level >= config().log_level ("devshim LEVEL: message").
  void log(LogLevel level, const std::string& message) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace devshim
