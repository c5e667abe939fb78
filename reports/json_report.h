// report.json: the report for tools. Format: docs/report-format.md (schema_version 1; later
// versions add keys and never rename these).
#pragma once

#include <nlohmann/json.hpp>

#include "reports/report.h"

namespace devshim {

inline constexpr int kReportSchemaVersion = 1;

/// {"schema_version", "run", "summary", "files": [{"path", "status", "duration_s", "log",
/// "cases": [{"classname", "name", "status", "duration_s", "message", "signature",
/// "source": {"path", "line"}, ...}]}], "clusters": [{"signature", "count", "exception",
/// "message", "tests": [...]}]}
nlohmann::json render_json(const Report& report);

}  // namespace devshim
