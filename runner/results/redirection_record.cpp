#include "runner/results/redirection_record.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "runner/base/error.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string string_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

}  // namespace

std::vector<Redirection> parse_redirection_record(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    throw RuntimeError("redirection record is not a JSON object");
  }
  const std::string format = string_field(doc, "format");
  if (format != kRecordFormat) {
    throw RuntimeError(fmt::format("redirection record has format \"{}\", expected \"{}\"", format,
                                   kRecordFormat));
  }
  auto list = doc.find("redirections");
  if (list == doc.end() || !list->is_array()) {
    throw RuntimeError("redirection record has no \"redirections\" list");
  }
  const std::string shim = string_field(doc, "shim");
  std::vector<Redirection> out;
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& e = (*list)[i];
    Redirection r;
    if (e.is_object()) {
      r.api = string_field(e, "api");
      r.requested = string_field(e, "requested");
      r.used = string_field(e, "used");
      auto count = e.find("count");
      if (count != e.end() && count->is_number_integer()) r.count = count->get<long long>();
    }
    if (r.api.empty() || r.requested.empty() || r.used.empty() || r.count <= 0) {
      throw RuntimeError(fmt::format(
          "redirection record entry {} lacks api, requested, used or a positive count", i));
    }
    r.shim = shim;
    if (auto site = e.find("call_site"); site != e.end() && site->is_object()) {
      r.site_file = string_field(*site, "file");
      r.site_function = string_field(*site, "function");
      auto line = site->find("line");
      if (line != site->end() && line->is_number_integer()) r.site_line = line->get<int>();
    }
    out.push_back(std::move(r));
  }
  return out;
}

RecordRead read_redirection_record(const fs::path& path, const fs::path& project_root) {
  RecordRead result;
  std::ifstream in(path, std::ios::binary);
  if (!in) return result;  // no record: nothing was redirected
  std::ostringstream text;
  text << in.rdbuf();
  try {
    result.entries = parse_redirection_record(text.str());
  } catch (const Error& e) {
    result.error = fmt::format("{}: {}", path.string(), e.what());
    return result;
  }
  const fs::path root = project_root.lexically_normal();
  for (auto& r : result.entries) {
    if (r.site_file.empty()) continue;
    const fs::path site = fs::path(r.site_file).lexically_normal();
    if (!site.is_absolute()) continue;
    const fs::path rel = site.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != "..") r.site_file = rel.generic_string();
  }
  return result;
}

}  // namespace devshim
