// The shim's settings, read from the environment: the same variables, values and defaults as the
// Python shim (shim/python/devshim/config.py, docs/shim.md), except that an unknown
// TORCHDEVICE_POLICY throws ShimConfigError where the Python shim logs an ERROR and uses default:
// a C++ program calls the helpers itself, so it hears of the mistake at the call.
//
//   variable               | values                                           | default
//   ACTIVATE_TORCH_DEVICE  | 1/true/yes/on (any case, spaces ignored): active | off
//   TORCH_ALLOW_REDIRECTS  | 1/true/yes/on: redirect on a CUDA machine too    | off
//   TORCHDEVICE_POLICY     | default, accelerator-only                        | default
//   TORCHDEVICE_LOG_LEVEL  | DEBUG, INFO, WARNING, ERROR (any case)           | WARNING
//   TORCHDEVICE_RECORD     | a file: the redirection record is merged into it at exit | none
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "devshim/policy.h"

namespace devshim {

/// A setting that cannot be used (today: an unknown TORCHDEVICE_POLICY). what() names the
/// variable, the value and the accepted values.
class ShimConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class LogLevel { kDebug, kInfo, kWarning, kError };

/// "DEBUG", "INFO", "WARNING", "ERROR".
const char* log_level_name(LogLevel level);

struct ShimConfig {
  bool activated = false;                   ///< ACTIVATE_TORCH_DEVICE
  bool allow_redirects = false;             ///< TORCH_ALLOW_REDIRECTS
  Policy policy = Policy::kDefault;         ///< TORCHDEVICE_POLICY
  LogLevel log_level = LogLevel::kWarning;  ///< TORCHDEVICE_LOG_LEVEL
  std::string record_path;                  ///< TORCHDEVICE_RECORD, made absolute; empty: none
  /// Values that were ignored (an unknown log level), one sentence each, for the log.
  std::vector<std::string> problems;
};

/// The one truth test of every devshim switch: "1", "true", "yes", "on" (any case, surrounding
/// whitespace ignored). Anything else, and unset, is false.
bool truthy(std::optional<std::string_view> value);

/// Reads one variable: its value, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

/// The settings that `env` describes. Never reads the process environment itself.
/// An unknown log level falls back to WARNING and is listed in `problems` (the Shim logs them
/// at ERROR, as the Python shim does). Throws
/// ShimConfigError when TORCHDEVICE_POLICY (read only when the shim is activated: an inactive
/// shim never uses it) is set to anything but a policy name.
ShimConfig config_from(const EnvLookup& env);

/// config_from(getenv). Throws what config_from throws.
ShimConfig config_from_environment();

}  // namespace devshim
