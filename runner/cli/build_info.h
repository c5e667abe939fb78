// What `runner --version` says about the program: which devshim, from which commit, for which
// platform, built how. The values come from the build (cmake/build_info.cmake writes them).
#pragma once

#include <string>

namespace devshim {

struct BuildInfo {
  const char* version;     ///< devshim's one version (the shim package's __version__)
  const char* commit;      ///< git commit of the source, "+dirty" with local changes; "unknown"
  const char* platform;    ///< operating system and processor, e.g. "linux-x86_64"
  const char* build_type;  ///< CMAKE_BUILD_TYPE, with the sanitizers when instrumented
};

const BuildInfo& build_info();

/// The --version text: "runner <version>" on its first line, then one "<fact>: <value>" line each.
std::string version_text(const BuildInfo& info);

}  // namespace devshim
