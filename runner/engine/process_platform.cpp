#include "runner/engine/process_platform.h"

namespace devshim {

namespace {

const ProcessPlatform* g_selected = nullptr;

const ProcessPlatform& build_default() {
#if defined(DEVSHIM_PLATFORM_LINUX)
  return linux_platform();
#else
  return posix_platform();
#endif
}

}  // namespace

const ProcessPlatform* process_platform_named(std::string_view name) {
#if defined(DEVSHIM_PLATFORM_LINUX)
  if (name == "linux") return &linux_platform();
#endif
  if (name == "posix") return &posix_platform();
  return nullptr;
}

std::string process_platform_names() {
#if defined(DEVSHIM_PLATFORM_LINUX)
  return "linux, posix";
#else
  return "posix";
#endif
}

const ProcessPlatform& process_platform() {
  return g_selected != nullptr ? *g_selected : build_default();
}

void select_process_platform(const ProcessPlatform& platform) { g_selected = &platform; }

}  // namespace devshim
