// `runner import LOGDIR`: logs written by TorchDevice's run_transformer_tests.py → one run (their
// format and its reader: parsers/torchdevice_log.h).
#pragma once

#include <filesystem>
#include <string>

namespace devshim {

/// Imports LOGDIR into the database as one run (mode "shim", suite = suite_name, else the
/// project's folder name, else the series name) and prints its id. Throws UsageError when LOGDIR
/// has no overall log or it has no finished files.
int import_logs(const std::filesystem::path& log_dir, const std::filesystem::path& db_path,
                const std::string& suite_name);

}  // namespace devshim
