#include "runner/results/redirection_record.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "base/error.h"
#include "runner/results/native_id.h"

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

namespace {

json parse_document(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    throw RuntimeError("redirection record is not a JSON object");
  }
  return doc;
}

std::vector<Redirection> entries_of(const json& doc) {
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

// The tests a record names under key ("cuda_path_tests", "cuda_asked_tests"); none when absent
// (an older shim's record has no "cuda_asked_tests").
std::vector<std::string> named_tests_of(const json& doc, const char* key) {
  std::vector<std::string> out;
  auto list = doc.find(key);
  if (list == doc.end()) return out;
  if (!list->is_array())
    throw RuntimeError(fmt::format("redirection record's \"{}\" is no list", key));
  for (const json& t : *list) {
    if (!t.is_string()) {
      throw RuntimeError(
          fmt::format("redirection record's \"{}\" holds a value that is no string", key));
    }
    out.push_back(t.get<std::string>());
  }
  return out;
}

}  // namespace

std::vector<Redirection> parse_redirection_record(std::string_view text) {
  return entries_of(parse_document(text));
}

RecordRead parse_named_tests(std::string_view text) {
  const json doc = parse_document(text);
  RecordRead out;
  out.cuda_path_tests = named_tests_of(doc, "cuda_path_tests");
  out.cuda_asked_tests = named_tests_of(doc, "cuda_asked_tests");
  return out;
}

RecordRead read_redirection_record(const fs::path& path, const fs::path& project_root) {
  RecordRead result;
  std::ifstream in(path, std::ios::binary);
  if (!in) return result;  // no record: nothing was redirected
  std::ostringstream text;
  text << in.rdbuf();
  try {
    const json doc = parse_document(text.str());
    result.entries = entries_of(doc);
    result.cuda_path_tests = named_tests_of(doc, "cuda_path_tests");
    result.cuda_asked_tests = named_tests_of(doc, "cuda_asked_tests");
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

int mark_cuda_path(std::string_view framework, std::string_view tests_dir, std::string_view file,
                   const RecordRead& record, std::vector<TestCase>& cases) {
  if (record.cuda_path_tests.empty() && record.cuda_asked_tests.empty()) return 0;
  const std::unordered_set<std::string_view> work(record.cuda_path_tests.begin(),
                                                  record.cuda_path_tests.end());
  const std::unordered_set<std::string_view> asked(record.cuda_asked_tests.begin(),
                                                   record.cuda_asked_tests.end());
  int marked = 0;
  for (TestCase& c : cases) {
    const TestIds ids = test_ids(framework, tests_dir, file, c.classname, c.name);
    const std::size_t sep = ids.target.find("::");
    if (sep == std::string::npos) continue;
    const std::string_view target = std::string_view(ids.target).substr(sep + 2);
    if (work.count(target) > 0) {
      c.cuda_contact = CudaContact::kDeviceWork;
    } else if (asked.count(target) > 0) {
      c.cuda_contact = CudaContact::kAsked;
    } else {
      continue;
    }
    ++marked;
  }
  return marked;
}

}  // namespace devshim
