#include "runner/cli/init_command.h"

#include <fmt/format.h>

#include <system_error>

#include "base/error.h"
#include "reports/write_reports.h"
#include "runner/cli/process_environment.h"
#include "runner/engine/suite.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

constexpr int kKeyWidth = 14;

std::string facts_text(const InferredSuite& inferred) {
  std::string text;
  for (const Inferred& f : inferred.facts) {
    text += fmt::format("runner:   {:<{}}{}  ({})\n", f.key, kKeyWidth, f.value, f.from);
  }
  return text;
}

}  // namespace

std::string opened_suite_text(const OpenedSuite& opened, const fs::path& path) {
  if (opened.kept) {
    return fmt::format("runner: suite file {} (the project's, written by runner init)\n",
                       opened.kept_file.string());
  }
  if (!opened.inferred) return "";
  return fmt::format(
      "runner: no suite file: inferred from the project's own files (docs/suites.md, \"Without a "
      "suite file\")\n{}runner: to keep these and edit them: runner init {}  (writes {})\n",
      facts_text(*opened.inferred), path.string(), opened.kept_file.string());
}

int init_command(const InitOptions& o) {
  if (names_suite_file(o.path)) {
    throw UsageError(fmt::format(
        "{} is a suite file already (a .json file or a folder holding suite.json): runner init "
        "writes one for a project without",
        o.path.string()));
  }
  const OpenedSuite opened =
      open_suite(o.path, o.python, runner_environment(), KeptSuiteFile::kIgnore);
  std::error_code ec;
  if (fs::exists(opened.kept_file, ec) && !o.force) {
    throw UsageError(fmt::format(
        "{} exists: runner init leaves it as it is (--force writes it again from what it infers)",
        opened.kept_file.string()));
  }
  write_file_atomically(opened.kept_file, inferred_suite_json(*opened.inferred));
  // What was written is read back as every run will read it.
  load_suite(opened.kept_file, runner_environment());
  std::fputs(facts_text(*opened.inferred).c_str(), stdout);
  std::printf(
      "runner: wrote %s; a run of this project (runner %s) reads it from now on: edit it for "
      "what differs (timeout_s, env, locks, preload: docs/suites.md)\n",
      opened.kept_file.c_str(), o.path.c_str());
  return kExitOk;
}

}  // namespace devshim
