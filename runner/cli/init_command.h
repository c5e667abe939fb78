// `runner init PATH`: the suite file a run of a project without one infers, written into the
// project root for later runs to read; and the lines that say what a run inferred
// (docs/suites.md, "Without a suite file").
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

#include "runner/engine/suite_source.h"

namespace devshim {

/// What `runner PATH` opened, in lines for the terminal: nothing for a suite file given; for the
/// project's kept suite file, which one; for an inference, each value with where it came from and
/// how to keep them (`runner init`).
std::string opened_suite_text(const OpenedSuite& opened, const std::filesystem::path& path);

struct InitOptions {
  std::filesystem::path path = ".";  ///< the project folder, its tests folder or a test file
  std::string python;                ///< --python; empty: inferred
  bool force = false;                ///< --force: write over a kept suite file
};

/// Infers the suite of the project at o.path and writes it into the project root
/// (kKeptSuiteFile), printing what it inferred and where it wrote. Throws UsageError when path
/// is a suite file already, when the kept suite file exists (without force), and as open_suite.
int init_command(const InitOptions& o);

}  // namespace devshim
