// The checks of the runner-side fuzz targets: suite.json loading (suite_fuzz) and the overall log
// of a TorchDevice log folder (import_log_fuzz). Needs runner/engine/suite.cpp,
// runner/engine/json_locations.cpp and runner/cli/import_command.cpp.
#pragma once

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "fuzz/fuzz_checks.h"
#include "runner/base/error.h"
#include "runner/cli/import_command.h"
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

/// import_log_fuzz: the overall log of a TorchDevice log folder, read as `runner import` reads
/// it (LineReader, then parse_finished_line on every line).
inline void run_import_log(std::string_view data) {
  LineReader lines = LineReader::from_string(std::string(data));
  std::string_view line;
  while (lines.next(line)) {
    const auto f = parse_finished_line(line);
    if (!f) continue;
    check(line.find("Finished test: ") != std::string_view::npos, "finished line without marker");
    check(f->module.empty() || (f->module.front() != ' ' && f->module.back() != ' '),
          "module name not trimmed");
    check(!std::isnan(f->duration_s), "duration is NaN");
  }
}

}  // namespace devshim::fuzz
