#include "runner/engine/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/error.h"
#include "parsers/text.h"
#include "runner/engine/json_locations.h"
#include "runner/engine/pytest_config.h"

namespace devshim {

namespace fs = std::filesystem;
using nlohmann::json;

const char* framework_name(Framework f) {
  switch (f) {
    case Framework::kUnittest:
      return "unittest";
    case Framework::kPytest:
      return "pytest";
    case Framework::kGtest:
      return "gtest";
  }
  return "?";
}

std::optional<Framework> parse_framework(const std::string& name) {
  if (name == "unittest") return Framework::kUnittest;
  if (name == "pytest") return Framework::kPytest;
  if (name == "gtest") return Framework::kGtest;
  return std::nullopt;
}

namespace {

// The keys a suite file may hold. Keys starting with '_' or "$" are comments and ignored.
const std::set<std::string> kKnownKeys = {
    "name",      "project_root", "project_root_env", "tests_dir", "pattern",
    "framework", "python",       "pythonpath",       "env",       "args",
    "timeout_s", "source_url",   "gtest_shards",     "preload",   "locks",
    "targets",   "norecursedirs"};

constexpr std::int64_t kMaxGtestShards = 1000;

// Edit distance, for "did you mean" suggestions on unknown keys.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

class SuiteReader {
 public:
  SuiteReader(fs::path file, std::string text)
      : file_(std::move(file)), text_(std::move(text)), members_(json_members(text_)) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
    auto it = members_.lines.find(pointer);
    fail_at(it == members_.lines.end() ? 1 : it->second, pointer, message);
  }

  [[noreturn]] void fail_at(int line, const std::string& pointer,
                            const std::string& message) const {
    // Display form: path segments joined with '.', pointer escapes undone.
    std::string key;
    for (std::size_t i = 1; i < pointer.size(); ++i) {
      if (pointer[i] == '/') {
        key += '.';
      } else if (pointer[i] == '~' && i + 1 < pointer.size()) {
        key += pointer[++i] == '1' ? '/' : '~';
      } else {
        key += pointer[i];
      }
    }
    if (key.empty()) key = "(top level)";
    throw UsageError(fmt::format("{}:{}: key \"{}\": {}", file_.string(), line, key, message));
  }

  std::string string_at(const json& v, const std::string& pointer) const {
    if (!v.is_string()) fail(pointer, fmt::format("expected a string, got {}", v.type_name()));
    return v.get<std::string>();
  }

  const fs::path& file() const { return file_; }
  const std::string& text() const { return text_; }

  /// Fails on the first key given twice in one object: JSON would keep the last silently.
  void check_no_duplicate_keys() const {
    if (members_.duplicates.empty()) return;
    const auto& [pointer, line] = members_.duplicates.front();
    fail_at(line, pointer,
            fmt::format("given twice (first at line {}); keep one", members_.lines.at(pointer)));
  }

 private:
  fs::path file_;
  std::string text_;
  JsonMembers members_;
};

// The suite file of a folder or a file name, absolute, with its text.
SuiteReader read_suite_file(const fs::path& suite_dir_or_file) {
  fs::path file = suite_dir_or_file;
  std::error_code ec;
  if (fs::is_directory(file, ec)) file /= "suite.json";
  const bool exists = fs::exists(file, ec);
  // exists() clears the error for a path that is not there: an error left is another cause
  // (a folder on the way this user may not enter).
  if (ec) throw UsageError(fmt::format("{}: cannot read: {}", file.string(), ec.message()));
  if (!exists) {
    throw UsageError(
        fmt::format("{}: no such suite file (a suite is a folder with suite.json)", file.string()));
  }
  file = fs::absolute(file).lexically_normal();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot read", file.string()));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return SuiteReader(file, buffer.str());
}

// The file's one JSON object; malformed JSON is reported at its line and column.
json parse_suite_json(const SuiteReader& r) {
  json doc;
  try {
    doc = json::parse(r.text());
  } catch (const json::parse_error& e) {
    TextPosition pos = position_of_offset(r.text(), e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    // nlohmann's message is "[json.exception.parse_error.101] parse error at line L, column C:
    // <detail>"; keep the detail only.
    auto colon = what.find(": ", what.find("parse error"));
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    throw UsageError(fmt::format("{}:{}:{}: malformed JSON: {}", r.file().string(), pos.line,
                                 pos.column, detail));
  } catch (const json::exception& e) {
    // Numbers JSON allows but a double does not hold (1e999): nlohmann gives no position.
    std::string what = e.what();
    auto bracket = what.find("] ");
    throw UsageError(fmt::format("{}: malformed JSON: {}", r.file().string(),
                                 bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
  if (!doc.is_object()) r.fail("", "a suite file holds one JSON object");
  r.check_no_duplicate_keys();
  return doc;
}

// Fails on the first key that is neither known nor a comment, suggesting the nearest known one.
void check_known_keys(const json& doc, const SuiteReader& r) {
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    if (key.empty() || key[0] == '_' || key[0] == '$') continue;
    if (kKnownKeys.count(key) != 0) continue;
    std::string best;
    std::size_t best_d = 3;
    for (const auto& k : kKnownKeys) {
      std::size_t d = edit_distance(key, k);
      if (d < best_d) {
        best_d = d;
        best = k;
      }
    }
    r.fail("/" + json_pointer_token(key),
           best.empty() ? std::string("unknown key (see docs/suites.md)")
                        : fmt::format("unknown key; did you mean \"{}\"?", best));
  }
}

// The values of a suite file as written, checked one by one; paths are resolved afterwards.
struct SuiteFields {
  std::string project_root = ".";
  std::vector<std::string> pythonpath;
};

std::vector<std::string> string_list(const json& doc, const SuiteReader& r, const char* key) {
  std::vector<std::string> out;
  auto it = doc.find(key);
  if (it == doc.end()) return out;
  const std::string pointer = std::string("/") + key;
  if (!it->is_array())
    r.fail(pointer, fmt::format("expected a list of strings, got {}", it->type_name()));
  for (std::size_t i = 0; i < it->size(); ++i) {
    out.push_back(r.string_at((*it)[i], pointer + "/" + std::to_string(i)));
  }
  return out;
}

// "pattern": one fnmatch pattern, or a non-empty list of them.
void read_patterns(const json& doc, const SuiteReader& r, Suite& s) {
  auto it = doc.find("pattern");
  if (it == doc.end()) return;
  if (it->is_string()) {
    s.patterns = {it->get<std::string>()};
  } else if (it->is_array() && !it->empty()) {
    s.patterns = string_list(doc, r, "pattern");
  } else {
    r.fail("/pattern",
           fmt::format("expected a file name pattern or a non-empty list of them, got {}",
                       it->type_name()));
  }
  for (std::size_t i = 0; i < s.patterns.size(); ++i) {
    if (s.patterns[i].empty()) {
      r.fail(it->is_array() ? "/pattern/" + std::to_string(i) : "/pattern", "an empty pattern");
    }
  }
}

// framework, gtest_shards, timeout_s: the keys that choose how the files run.
void read_run_keys(const json& doc, const SuiteReader& r, Suite& s) {
  if (auto it = doc.find("framework"); it != doc.end()) {
    std::string name = r.string_at(*it, "/framework");
    auto f = parse_framework(name);
    if (!f) {
      r.fail("/framework", fmt::format("unknown framework \"{}\" (unittest, pytest, gtest)", name));
    }
    s.framework = *f;
  }
  if (s.framework == Framework::kGtest && doc.find("pattern") == doc.end()) s.patterns = {"*_test"};
  if (s.framework == Framework::kPytest && doc.find("norecursedirs") == doc.end()) {
    s.norecursedirs = pytest_default_norecursedirs();
  }
  if (auto it = doc.find("gtest_shards"); it != doc.end()) {
    if (s.framework != Framework::kGtest) {
      r.fail("/gtest_shards", "only for \"framework\": \"gtest\"");
    }
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 ||
        it->get<std::int64_t>() > kMaxGtestShards) {
      r.fail("/gtest_shards",
             fmt::format("expected a whole number of shards from 1 to {}", kMaxGtestShards));
    }
    s.gtest_shards = it->get<int>();
  }
  if (auto it = doc.find("timeout_s"); it != doc.end()) {
    if (!it->is_number() || it->get<double>() <= 0) {
      r.fail("/timeout_s", "expected a positive number of seconds");
    }
    s.timeout_s = it->get<double>();
  }
}

// "locks": {"name": ["pattern", ...], ...}; a lock with no pattern would hold nothing.
void read_locks(const json& doc, const SuiteReader& r, Suite& s) {
  auto it = doc.find("locks");
  if (it == doc.end()) return;
  if (!it->is_object()) {
    r.fail("/locks", fmt::format("expected an object of lock names to lists of file patterns, "
                                 "got {}",
                                 it->type_name()));
  }
  for (auto lock = it->begin(); lock != it->end(); ++lock) {
    const std::string pointer = "/locks/" + json_pointer_token(lock.key());
    if (lock.key().empty()) r.fail(pointer, "a lock needs a name");
    if (!lock->is_array() || lock->empty()) {
      r.fail(pointer, "expected a non-empty list of file patterns (relative to the tests folder)");
    }
    std::vector<std::string>& patterns = s.locks[lock.key()];
    for (std::size_t i = 0; i < lock->size(); ++i) {
      patterns.push_back(r.string_at((*lock)[i], pointer + "/" + std::to_string(i)));
      if (patterns.back().empty()) r.fail(pointer + "/" + std::to_string(i), "an empty pattern");
    }
  }
}

SuiteFields read_fields(const json& doc, const SuiteReader& r, Suite& s) {
  auto get_string = [&](const char* key, std::string& out, bool required = false) {
    auto it = doc.find(key);
    if (it == doc.end()) {
      if (required) r.fail("", fmt::format("missing required key \"{}\"", key));
      return;
    }
    out = r.string_at(*it, std::string("/") + key);
  };

  get_string("name", s.name, /*required=*/true);
  // The name is a folder of the output root: no path of its own, nothing a terminal acts on.
  const bool controls = std::any_of(s.name.begin(), s.name.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (s.name.empty() || s.name == "." || s.name == ".." || controls ||
      s.name.find_first_of("/\\ ") != std::string::npos) {
    r.fail("/name",
           "must be a non-empty identifier without '/', '\\', spaces or control characters, "
           "and not \".\" or \"..\"");
  }
  SuiteFields fields;
  get_string("project_root", fields.project_root);
  get_string("project_root_env", s.project_root_env);
  get_string("tests_dir", s.tests_dir);
  read_patterns(doc, r, s);
  get_string("python", s.python);
  get_string("source_url", s.source_url);
  if (!s.source_url.empty() && !is_web_url(s.source_url)) {
    r.fail("/source_url", "expected an http:// or https:// URL template");
  }
  read_run_keys(doc, r, s);
  fields.pythonpath = string_list(doc, r, "pythonpath");
  s.args = string_list(doc, r, "args");
  s.preload = string_list(doc, r, "preload");
  s.targets = string_list(doc, r, "targets");
  if (doc.contains("norecursedirs")) s.norecursedirs = string_list(doc, r, "norecursedirs");
  read_locks(doc, r, s);
  if (auto it = doc.find("env"); it != doc.end()) {
    if (!it->is_object())
      r.fail("/env", fmt::format("expected an object, got {}", it->type_name()));
    for (auto e = it->begin(); e != it->end(); ++e) {
      if (e.key().empty() || e.key().find('=') != std::string::npos) {
        r.fail("/env/" + json_pointer_token(e.key()), "not a valid environment variable name");
      }
      s.env[e.key()] = r.string_at(e.value(), "/env/" + json_pointer_token(e.key()));
    }
  }
  return fields;
}

// The project root (the named environment variable wins when set), the tests folder, the
// pythonpath entries and a python given as a path: absolute, and the folders must exist.
void resolve_paths(const SuiteReader& r, const SuiteFields& fields, const Environment& env,
                   Suite& s) {
  const fs::path& file = r.file();
  const fs::path suite_dir = file.parent_path();
  fs::path root = suite_dir / fields.project_root;
  std::string root_origin = fmt::format("{} (\"project_root\")", file.string());
  if (!s.project_root_env.empty()) {
    if (std::string value = value_of(env, s.project_root_env); !value.empty()) {
      root = std::move(value);
      root_origin =
          fmt::format("${} (\"project_root_env\" of {})", s.project_root_env, file.string());
    }
  }
  root = fs::absolute(root).lexically_normal();
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    std::string hint = s.project_root_env.empty()
                           ? std::string()
                           : fmt::format("; set {} to the checkout's path", s.project_root_env);
    throw UsageError(fmt::format("project root {} does not exist (from {}){}", root.string(),
                                 root_origin, hint));
  }
  s.project_root = fs::path(root.string().back() == '/' && root.string().size() > 1
                                ? root.string().substr(0, root.string().size() - 1)
                                : root.string());
  // Lexically inside the root: "../.." would run files of other projects.
  const fs::path tests_rel = s.tests_root().lexically_normal().lexically_relative(s.project_root);
  if (tests_rel.empty() || *tests_rel.begin() == "..") {
    r.fail("/tests_dir",
           fmt::format("{} is outside the project root {}; name a folder inside it",
                       s.tests_root().lexically_normal().string(), s.project_root.string()));
  }
  if (!fs::is_directory(s.tests_root(), ec)) {
    throw UsageError(fmt::format("tests folder {} does not exist (\"tests_dir\" of {})",
                                 s.tests_root().string(), file.string()));
  }
  for (const auto& p : fields.pythonpath) {
    s.pythonpath.push_back((s.project_root / p).lexically_normal());
  }
  if (s.python.find('/') != std::string::npos) {
    s.python = fs::absolute(suite_dir / s.python).lexically_normal().string();
  }
}

}  // namespace

std::string Suite::python_from() const {
  return python_origin.empty() ? fmt::format("\"python\" of {}", file.string()) : python_origin;
}

std::string Suite::patterns_text() const { return fmt::format("{}", fmt::join(patterns, " or ")); }

Suite load_suite(const fs::path& suite_dir_or_file, const Environment& env) {
  const SuiteReader r = read_suite_file(suite_dir_or_file);
  const json doc = parse_suite_json(r);
  check_known_keys(doc, r);
  Suite s;
  s.file = r.file();
  const SuiteFields fields = read_fields(doc, r, s);
  resolve_paths(r, fields, env, s);
  return s;
}

}  // namespace devshim
