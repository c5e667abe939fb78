// What the C++ tests look up in a run's report.json (docs/report-format.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace devshim::testing {

/// The case of report.json for file::name; null when the report has none.
inline nlohmann::json find_case(const nlohmann::json& report, const std::string& file,
                                const std::string& name) {
  for (const auto& f : report["files"]) {
    if (f["path"] != file) continue;
    for (const auto& c : f["cases"]) {
      if (c["name"] == name) return c;
    }
  }
  return nullptr;
}

}  // namespace devshim::testing
