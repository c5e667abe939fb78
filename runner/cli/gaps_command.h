// `runner gaps`: the API gap log on the command line (docs/gaps.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runner/results/gap_log.h"

namespace devshim {

/// Prints every entry of every suite (or of suite), one line each (or only those with the given
/// status/kind).
int gaps_list(const std::filesystem::path& db, const std::string& status, const std::string& kind,
              const std::optional<std::string>& suite = std::nullopt);
/// Prints the entries of api, one per suite (or suite's alone), with their affected tests (exit 2
/// when there is none).
int gaps_show(const std::filesystem::path& db, const std::string& api,
              const std::optional<std::string>& suite = std::nullopt);
int gaps_set(const std::filesystem::path& db, const std::string& api, const GapEdit& edit);
/// Lists torch's public CUDA surface and what the shim carries in python (with the shim folder
/// on PYTHONPATH) and applies it to the log (GapLog::apply_scan).
int gaps_scan(const std::filesystem::path& db, const std::string& python,
              const std::filesystem::path& shim_dir);
/// The log as a status page: format "md" (for a maintainer to commit) or "json"; to out, or
/// stdout when out is empty.
int gaps_export(const std::filesystem::path& db, const std::string& format,
                const std::filesystem::path& out,
                const std::optional<std::string>& suite = std::nullopt);

/// Markdown and JSON renderings of entries (shared with the reports).
std::string gaps_markdown(const std::vector<GapEntry>& entries);
std::string gaps_json(const std::vector<GapEntry>& entries);

}  // namespace devshim
