// The environment the runner works in, as a value: taken once at start-up by the command line
// (runner/cli/process_environment.h) and passed down; no code below the command line reads the
// process's environment.
#pragma once

#include <map>
#include <string>

namespace devshim {

using Environment = std::map<std::string, std::string>;

/// The value of name in env; empty when unset (an empty value reads the same).
inline std::string value_of(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

}  // namespace devshim
