// `runner compare A B`: any two recorded runs, test by test (docs/cli.md).
#pragma once

#include <filesystem>
#include <string>

namespace devshim {

/// Prints both runs (suite, mode, the shim's policy and version, torch, host, commit), the count
/// of each comparison class (runner/results/comparison.h), then every test of each class but
/// "same" with its statuses in A and B and B's message; as_json: the same as one JSON object.
/// A and B are run ids, "latest", or "latest~N" (the Nth run before the newest). Returns 0;
/// throws UsageError when the database does not exist or a run is unknown.
int compare_command(const std::filesystem::path& db_path, const std::string& a,
                    const std::string& b, bool as_json);

}  // namespace devshim
