// Reading a whole (small) file, for the parsers of XML reports.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace devshim {

/// The whole file; nullopt when it does not exist. Throws RuntimeError when it cannot be read.
std::optional<std::string> read_file(const std::filesystem::path& path);

}  // namespace devshim
