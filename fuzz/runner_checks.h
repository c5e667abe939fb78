// The checks of the runner-side fuzz target: suite.json loading (suite_fuzz). Needs
// runner/engine/suite.cpp and runner/engine/json_locations.cpp.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "base/error.h"
#include "fuzz/fuzz_checks.h"
#include "runner/engine/json_locations.h"
#include "runner/engine/suite.h"

namespace devshim::fuzz {

/// suite_fuzz: the input as SUITE_DIR/suite.json, next to a tests/ folder, read by load_suite.
/// A bad suite file must give UsageError (file, line and key), nothing else.
inline void run_suite(std::string_view data) {
  namespace fs = std::filesystem;
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("devshim_fuzz_suite_" + std::to_string(::getpid()));
    fs::create_directories(d / "tests");
    return d;
  }();
  {
    std::ofstream out(dir / "suite.json", std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  try {
    const Suite s = load_suite(dir, {});
    check(fs::exists(s.project_root), "loaded suite's project root does not exist");
    check(s.gtest_shards >= 1, "gtest_shards below 1");
  } catch (const UsageError&) {
    // The documented answer to a bad suite file.
  }
  (void)json_members(data);
  const TextPosition end = position_of_offset(data, data.size());
  check(end.line >= 1 && end.column >= 1, "text position below 1");
}

}  // namespace devshim::fuzz
