// report.json: the report for tools. Format: docs/report-format.md (schema_version 4; later
// versions add keys and never rename these).
#pragma once

#include <nlohmann/json.hpp>

#include "reports/report.h"

namespace devshim {

inline constexpr int kReportSchemaVersion = 5;

/// {"schema_version", "run", "summary", "files": [{"path", "status", "duration_s", "log",
/// "cases": [{"classname", "name", "status", "duration_s", "message", "signature",
/// "source": {"path", "line"}, ...}]}], "clusters": [{"signature", "count", "exception",
/// "message", "tests": [...]}]}
/// Dump it with dump_report_json: text from tests may hold invalid UTF-8 when a Report is made
/// by hand; the dump replaces it rather than throwing.
nlohmann::json render_json(const Report& report);

/// The report.json text: indented by 1, invalid UTF-8 replaced by U+FFFD.
std::string dump_report_json(const nlohmann::json& report);

/// {"local": ..., "upstream": ...}: each link, or null when there is none.
nlohmann::json links_json(const SourceLinks& links);

/// s, or null when s is empty: how every report in JSON writes an absent text.
nlohmann::json json_text(const std::string& s);

}  // namespace devshim
