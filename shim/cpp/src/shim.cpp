#include "devshim/shim.h"

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <mutex>

namespace devshim {

struct Shim::State {
  mutable std::mutex mutex;
  ShimConfig config;
  HardwareProbe probe;
  std::optional<Hardware> hardware;
  bool override = false;
  LogSink sink;
  Recorder recorder;
};

namespace {

std::string requested_text(const std::optional<DeviceRequest>& requested) {
  return requested ? format_device(*requested) : std::string(kNoDeviceRequested);
}

}  // namespace

void log_to_stderr(const std::string& line) {
  const std::string text = line + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
}

const char* shim_mode_name(ShimMode mode) {
  switch (mode) {
    case ShimMode::kInactive:
      return "inactive";
    case ShimMode::kPassthrough:
      return "passthrough";
    case ShimMode::kRedirect:
      return "redirect";
  }
  return "inactive";
}

bool same_device(const DeviceRequest& a, const DeviceRequest& b) {
  if (a.type != b.type) return false;
  if (a.index == b.index) return true;
  auto none_or_zero = [](const std::optional<int>& i) { return !i || *i == 0; };
  return (a.type == "cpu" || a.type == "mps") && none_or_zero(a.index) && none_or_zero(b.index);
}

Shim::Shim(ShimConfig config, HardwareProbe probe_hardware, LogSink log)
    : state_(std::make_unique<State>()) {
  state_->config = std::move(config);
  state_->probe = std::move(probe_hardware);
  state_->sink = log ? std::move(log) : LogSink(log_to_stderr);
  for (const auto& problem : state_->config.problems) this->log(LogLevel::kError, problem);
}

Shim::~Shim() = default;

ShimConfig Shim::config() const {
  std::lock_guard lock(state_->mutex);
  return state_->config;
}

void Shim::log(LogLevel level, const std::string& message) const {
  LogLevel threshold;
  LogSink sink;
  {
    std::lock_guard lock(state_->mutex);
    threshold = state_->config.log_level;
    sink = state_->sink;
  }
  if (level < threshold) return;
  sink(std::string("devshim ") + log_level_name(level) + ": " + message);
}

Hardware Shim::hardware() {
  std::unique_lock lock(state_->mutex);
  if (state_->hardware) return *state_->hardware;
  const Hardware hw = state_->probe ? state_->probe() : Hardware{};
  state_->hardware = hw;
  const ShimConfig config = state_->config;
  lock.unlock();
  const auto accel = hw.accelerator();
  const bool passthrough = accel == "cuda" && !config.allow_redirects;
  log(LogLevel::kDebug, std::string("hardware: accelerator=") + accel.value_or("none") +
                            " mps=" + (hw.mps ? "true" : "false") +
                            " cuda_device_count=" + std::to_string(hw.cuda_device_count) +
                            "; policy=" + policy_name(config.policy) +
                            "; mode=" + (passthrough ? "passthrough" : "redirect"));
  return hw;
}

ShimMode Shim::mode() {
  const ShimConfig config = this->config();
  if (!config.activated) return ShimMode::kInactive;
  const Hardware hw = hardware();
  if (hw.accelerator() == "cuda" && !config.allow_redirects) return ShimMode::kPassthrough;
  return ShimMode::kRedirect;
}

std::optional<Decision> Shim::redirect(const std::optional<DeviceRequest>& requested,
                                       const char* api, const std::source_location& site) {
  if (mode() != ShimMode::kRedirect) return std::nullopt;
  const Hardware hw = hardware();
  Decision decision;
  {
    std::lock_guard lock(state_->mutex);
    decision = resolve(requested, hw, state_->override, state_->config.policy);
    state_->override = decision.override;
  }
  // "No device given" that lands on the CPU is torch's own default: nothing is rewritten.
  const bool unchanged =
      requested ? same_device(*requested, decision.device) : decision.device.type == "cpu";
  if (unchanged) return std::nullopt;
  const std::string req = requested_text(requested);
  const std::string used = decision.device_str();
  if (state_->recorder.hit(api, req, used, site)) {
    log(LogLevel::kInfo, std::string(api) + ": " + req + " -> " + used + " at " + site.file_name() +
                             ":" + std::to_string(site.line()) + " (" +
                             bare_function_name(site.function_name()) + ")");
  }
  return decision;
}

bool Shim::cpu_override() const {
  std::lock_guard lock(state_->mutex);
  return state_->override;
}

std::vector<RecordEntry> Shim::record() const { return state_->recorder.entries(); }

RecordHeader Shim::record_header() {
  const ShimConfig config = this->config();
  RecordHeader header;
  header.pid = static_cast<long long>(::getpid());
  header.policy = config.policy;
  if (config.activated) header.hardware = hardware();
  return header;
}

bool Shim::write_record_now() {
  const ShimConfig config = this->config();
  if (!config.activated || config.record_path.empty()) return false;
  try {
    write_record(config.record_path, record_header(), record(),
                 [this](const std::string& warning) { log(LogLevel::kWarning, warning); });
    return true;
  } catch (const std::exception& e) {
    log(LogLevel::kError,
        "could not write the redirection record " + config.record_path + ": " + e.what());
  } catch (...) {
    log(LogLevel::kError, "could not write the redirection record " + config.record_path);
  }
  return false;
}

void Shim::before_fork() {
  state_->mutex.lock();
  state_->recorder.before_fork();
}

void Shim::after_fork_in_parent() {
  state_->recorder.after_fork_in_parent();
  state_->mutex.unlock();
}

void Shim::after_fork_in_child() {
  state_->recorder.after_fork_in_child();
  state_->mutex.unlock();
}

void Shim::reset(ShimConfig config, HardwareProbe probe_hardware) {
  {
    std::lock_guard lock(state_->mutex);
    state_->config = std::move(config);
    state_->probe = std::move(probe_hardware);
    state_->hardware.reset();
    state_->override = false;
  }
  state_->recorder.clear();
  for (const auto& problem : this->config().problems) log(LogLevel::kError, problem);
}

}  // namespace devshim
