#include <fmt/format.h>

#include "runner/cli/build_info.h"

namespace devshim {

std::string version_text(const BuildInfo& info) {
  return fmt::format("runner {}\ncommit: {}\nplatform: {}\nbuild: {}", info.version, info.commit,
                     info.platform, info.build_type);
}

}  // namespace devshim
