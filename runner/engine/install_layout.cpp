#include "runner/engine/install_layout.h"

#include <unistd.h>

#include <string>
#include <system_error>

#include "runner/engine/process_pool.h"

#if defined(__APPLE__)
#include <mach-o/dyld.h>

#include <cstdint>
#include <vector>
#endif

namespace devshim {

namespace fs = std::filesystem;

namespace {

constexpr const char* kProbeName = "devshim-probe";

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

fs::path executable_path() {
  std::error_code ec;
#if defined(__APPLE__)
  std::uint32_t size = 0;
  ::_NSGetExecutablePath(nullptr, &size);  // asks for the size the path needs
  std::vector<char> buffer(size + 1, '\0');
  if (::_NSGetExecutablePath(buffer.data(), &size) != 0) return {};
  fs::path self = fs::canonical(buffer.data(), ec);
#else
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
#endif
  return ec ? fs::path() : self;
}

fs::path installed_data_dir() {
  const fs::path self = executable_path();
  if (self.empty()) return {};
  return (self.parent_path() / ".." / "share" / "devshim").lexically_normal();
}

fs::path default_shim_dir(const Environment& env) {
  if (std::string dir = value_of(env, "DEVSHIM_SHIM_DIR"); !dir.empty()) return dir;
  const fs::path data = installed_data_dir();
  return data.empty() ? fs::path() : data / "shim";
}

fs::path zygote_script(const Environment& env) {
  if (std::string script = value_of(env, "DEVSHIM_ZYGOTE"); !script.empty()) return script;
  const fs::path data = installed_data_dir();
  return data.empty() ? fs::path() : data / "zygote" / "devshim_zygote.py";
}

fs::path find_device_probe(const Environment& env) {
  if (std::string probe = value_of(env, "DEVSHIM_PROBE"); !probe.empty()) return probe;
  if (const fs::path self = executable_path(); !self.empty()) {
    for (const fs::path& candidate : {self.parent_path() / kProbeName,
                                      self.parent_path() / ".." / "shim" / "cpp" / kProbeName}) {
      if (executable(candidate)) return candidate.lexically_normal();
    }
  }
  const std::string on_path = find_executable(kProbeName, env);
  return on_path.empty() ? fs::path() : fs::path(on_path);
}

}  // namespace devshim
