// What `runner PATH` runs: a suite file as always, or a project without one — its kept suite file
// (`runner init`'s) when it has one, else the suite inferred from its own files
// (runner/engine/project_inference.h) — with what PATH selects in it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runner/engine/environment.h"
#include "runner/engine/project_inference.h"
#include "runner/engine/suite.h"

namespace devshim {

struct OpenedSuite {
  Suite suite;
  /// What PATH selects in the tests folder (a folder or file in it, FILE::TEST): TARGETs before
  /// any the command line gives; empty for the tests folder, the project root or a suite file.
  std::vector<std::string> targets;
  std::optional<InferredSuite> inferred;  ///< the inference, when no suite file was found
  /// A project's kept suite file: the one read (kept), or where `runner init` would write it.
  std::filesystem::path kept_file;
  bool kept = false;  ///< the suite is the project's kept suite file
};

/// Whether open_suite reads a project's kept suite file (a run) or infers regardless (`runner
/// init`, which writes it).
enum class KeptSuiteFile { kRead, kIgnore };

/// Whether path names a suite file: a `.json` file, or a folder holding suite.json.
bool names_suite_file(const std::filesystem::path& path);

/// Opens what `runner PATH` names. A suite file (names_suite_file) loads as it always has
/// (load_suite). Anything else is a project folder, its tests folder, a folder or file of tests,
/// or FILE::TEST: the project root's kept suite file (kKeptSuiteFile) when there is one, else
/// infer_suite; PATH becomes the targets it selects there. python: --python as given (inference
/// only). Throws UsageError for a path that does not exist (or cannot be read), one outside the
/// kept suite's tests folder, and a tests folder without a test file (naming where it looked and
/// why there).
OpenedSuite open_suite(const std::filesystem::path& path, const std::string& python,
                       const Environment& env, KeptSuiteFile kept = KeptSuiteFile::kRead);

}  // namespace devshim
