#include "runner/cli/process_environment.h"

#include <string>

#include "base/error.h"
#include "runner/engine/process_platform.h"
#include "runner/results/sqlite.h"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace devshim {

namespace {

Environment read_environment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

}  // namespace

const Environment& runner_environment() {
  static const Environment env = read_environment();
  return env;
}

void apply_process_settings(const Environment& env) {
  sql::set_default_busy_ms(sql::parse_busy_timeout(value_of(env, "DEVSHIM_DB_TIMEOUT")));
  if (const std::string name = value_of(env, "DEVSHIM_PROCESS_PLATFORM"); !name.empty()) {
    const ProcessPlatform* platform = process_platform_named(name);
    if (platform == nullptr) {
      throw UsageError("DEVSHIM_PROCESS_PLATFORM: no process platform '" + name +
                       "' in this build (it has: " + process_platform_names() + ")");
    }
    select_process_platform(*platform);
  }
}

}  // namespace devshim
