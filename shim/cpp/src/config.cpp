#include "devshim/config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

namespace devshim {

namespace {

std::string trimmed(std::string_view s) {
  const char* ws = " \t\n\r\f\v";
  auto first = s.find_first_not_of(ws);
  if (first == std::string_view::npos) return {};
  auto last = s.find_last_not_of(ws);
  return std::string(s.substr(first, last - first + 1));
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarning:
      return "WARNING";
    case LogLevel::kError:
      return "ERROR";
  }
  return "WARNING";
}

bool truthy(std::optional<std::string_view> value) {
  if (!value) return false;
  std::string v = trimmed(*value);
  std::transform(v.begin(), v.end(), v.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

ShimConfig config_from(const EnvLookup& env) {
  ShimConfig config;
  auto get = [&](const char* name) -> std::optional<std::string> { return env(name); };
  config.activated = truthy(get("ACTIVATE_TORCH_DEVICE"));
  config.allow_redirects = truthy(get("TORCH_ALLOW_REDIRECTS"));

  const std::string level = upper(trimmed(get("TORCHDEVICE_LOG_LEVEL").value_or("")));
  bool known = false;
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError}) {
    if (level == log_level_name(l)) {
      config.log_level = l;
      known = true;
    }
  }
  if (!known && !level.empty()) {
    config.problems.push_back("TORCHDEVICE_LOG_LEVEL='" + level +
                              "' is not one of DEBUG, INFO, WARNING, ERROR; using WARNING");
  }

  if (config.activated) {
    const std::string policy = trimmed(get("TORCHDEVICE_POLICY").value_or(""));
    if (!policy.empty()) {
      try {
        config.policy = parse_policy(policy);
      } catch (const std::invalid_argument&) {
        throw ShimConfigError("TORCHDEVICE_POLICY='" + policy +
                              "' is not a devshim policy: set it to default or accelerator-only, "
                              "or unset it");
      }
    }
  }

  const std::string record = trimmed(get("TORCHDEVICE_RECORD").value_or(""));
  if (!record.empty()) {
    std::error_code ec;
    auto absolute = std::filesystem::absolute(record, ec);
    config.record_path = ec ? record : absolute.lexically_normal().string();
  }
  return config;
}

ShimConfig config_from_environment() {
  return config_from([](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read, never set
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

}  // namespace devshim
