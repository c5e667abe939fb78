// `runner compare A B`: two recorded runs compared test by test, printed or written to a folder
// (the renderings: reports/comparison_report.h).
#pragma once

#include <filesystem>
#include <string>

#include "reports/fail_on.h"

namespace devshim {

/// `runner compare A B [--json] [--format md,json,html] [-o DIR] [--fail-on F]`: with dir,
/// writes compare.<format> for each format named (formats: comma-separated, empty: all three;
/// links relative to dir) and prints their absolute paths; otherwise prints the text (or JSON)
/// with absolute local links. Then the verdict's reason (on stderr after JSON); returns its exit
/// code. Throws UsageError for an unknown run, format or database.
int compare_command(const std::filesystem::path& db_path, const std::string& a,
                    const std::string& b, bool as_json, const std::string& formats = "",
                    const std::string& dir = "",
                    const FailOnList& fail_on = {FailOn::kRegressions});

}  // namespace devshim
