#include "runner/results/native_id.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <vector>

#include "runner/results/store.h"

namespace devshim {

namespace {

namespace fs = std::filesystem;

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

// "tests/test_x.py" → {"tests", "test_x"}; empty when the path is no .py file, or (importable)
// when a part is no Python identifier: unittest imports the module by that name, while pytest
// names classes after the path as it is ("tests.e2e-x.test_y").
std::vector<std::string> module_parts(const std::string& path, bool importable) {
  fs::path p(path);
  if (p.extension() != ".py") return {};
  p.replace_extension();
  std::vector<std::string> parts;
  for (const auto& part : p) {
    if (importable && !is_identifier(part.string())) return {};
    parts.push_back(part.string());
  }
  return parts;
}

std::string joined(const std::vector<std::string>& parts, std::size_t from, std::string_view sep) {
  std::string out;
  for (std::size_t i = from; i < parts.size(); ++i) {
    if (i > from) out += sep;
    out += parts[i];
  }
  return out;
}

// What follows the module in classname: "TestC.Inner" for "tests.test_x.TestC.Inner" in module
// tests/test_x.py. pytest names classes from its rootdir, which may lie below the project root
// ("test_x.TestC" when the rootdir is tests/: the longest tail of the module's path that classname
// starts with counts) or above it ("repo.sub.tests.test_x.TestC" when the project is a folder of
// a larger one whose pyproject.toml or pytest.ini pytest finds first: the module's whole path
// after a prefix counts). nullopt when classname is not in the module.
std::optional<std::string> classes_after_module(const std::vector<std::string>& module,
                                                std::string_view classname) {
  for (std::size_t from = 0; from < module.size(); ++from) {
    const std::string dotted = joined(module, from, ".");
    if (classname == dotted) return std::string();
    if (classname.size() > dotted.size() && classname.substr(0, dotted.size()) == dotted &&
        classname[dotted.size()] == '.') {
      return std::string(classname.substr(dotted.size() + 1));
    }
  }
  const std::string whole = "." + joined(module, 0, ".");
  for (std::size_t at = classname.find(whole); at != std::string_view::npos;
       at = classname.find(whole, at + 1)) {
    const std::size_t end = at + whole.size();
    if (end == classname.size()) return std::string();
    if (classname[end] == '.') return std::string(classname.substr(end + 1));
  }
  return std::nullopt;
}

std::string colons(std::string dotted) {
  for (std::size_t p = 0; (p = dotted.find('.', p)) != std::string::npos; p += 2) {
    dotted.replace(p, 1, "::");
  }
  return dotted;
}

// unittest's fixture errors ("setUpClass (tests.test_x.MyTest)") and pytest's "<module>"-like
// names are not tests of their own.
bool is_fixture(std::string_view name) {
  static constexpr std::string_view kFixtures[] = {"setUpClass", "tearDownClass", "setUpModule",
                                                   "tearDownModule"};
  const std::string_view head = name.substr(0, name.find(" ("));
  return name.empty() || name[0] == '<' ||
         std::find(std::begin(kFixtures), std::end(kFixtures), head) != std::end(kFixtures);
}

std::string file_without_shard(std::string_view file) {
  const std::size_t shard = file.find(" [shard ");
  return std::string(file.substr(0, shard));
}

}  // namespace

TestIds test_ids(std::string_view framework, std::string_view tests_dir, std::string_view file,
                 std::string_view classname, std::string_view name) {
  const std::string rel = file_without_shard(file);
  const std::string from_root =
      (fs::path(std::string(tests_dir)) / rel).lexically_normal().generic_string();
  TestIds ids;
  if (framework == "pytest") {
    const std::vector<std::string> module = module_parts(from_root, /*importable=*/false);
    const auto classes = module.empty() ? std::nullopt : classes_after_module(module, classname);
    if (classname.empty() || !classes) {  // a module skipped whole; a name outside the module
      ids.native = classname.empty()
                       ? from_root
                       : from_root + "::" + std::string(classname) + "::" + std::string(name);
      return ids;
    }
    const std::string rest = (classes->empty() ? "" : colons(*classes) + "::") + std::string(name);
    ids.native = from_root + "::" + rest;
    if (!is_fixture(name)) ids.target = rel + "::" + rest;
  } else if (framework == "unittest") {
    if (is_fixture(name) && name.find(" (") != std::string_view::npos) {
      ids.native = std::string(name);  // unittest's own description of the fixture error
      return ids;
    }
    ids.native = std::string(classname) + "." + std::string(name);
    const std::vector<std::string> module = module_parts(from_root, /*importable=*/true);
    const auto classes = module.empty() ? std::nullopt : classes_after_module(module, classname);
    const std::string_view method = name.substr(0, name.find(" ("));  // a subtest: its test
    if (classes && !classes->empty() && is_identifier(method) && !is_fixture(name)) {
      ids.target = rel + "::" + colons(*classes) + "::" + std::string(method);
    }
  } else if (framework == "gtest") {
    std::string prefix = rel;
    std::replace(prefix.begin(), prefix.end(), '/', '.');
    std::string_view suite = classname;
    if (suite.size() > prefix.size() + 1 && suite.substr(0, prefix.size()) == prefix &&
        suite[prefix.size()] == '.') {
      suite.remove_prefix(prefix.size() + 1);
    }
    ids.native = std::string(suite) + "." + std::string(name);
    if (!suite.empty() && !name.empty() && name.find_first_of(":*?") == std::string_view::npos &&
        suite != classname) {
      ids.target = rel + "::" + ids.native;
    }
  } else {
    ids.native =
        classname.empty() ? std::string(name) : std::string(classname) + "." + std::string(name);
  }
  return ids;
}

TestIds test_ids(const RunRecord& run, std::string_view file, std::string_view classname,
                 std::string_view name) {
  return test_ids(run.framework, run.tests_dir, file, classname, name);
}

std::string test_label(const RunRecord& run, std::string_view file, std::string_view classname,
                       std::string_view name) {
  if (classname.empty() && name == "(file)") return std::string(file) + "::(file)";
  return test_ids(run, file, classname, name).native;
}

std::string rerun_command(const RunRecord& run, const TestIds& ids) {
  if (ids.target.empty() || run.suite_file.empty()) return "";
  static constexpr std::string_view kKept[] = {"--db", "--python", "--shim-dir", "--timeout"};
  const std::vector<std::string>& argv = run.command_line;
  std::string command = shell_word(argv.empty() ? "runner" : argv[0]);
  command += " " + shell_word(run.suite_file) + " " + shell_word(ids.target);
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--no-shim") {
      command += " --no-shim";
      continue;
    }
    for (std::string_view option : kKept) {
      if (arg == option && i + 1 < argv.size()) {
        command += " " + std::string(option) + " " + shell_word(argv[++i]);
      } else if (arg.size() > option.size() && arg.starts_with(option) &&
                 arg[option.size()] == '=') {
        command += " " + std::string(option) + " " + shell_word(arg.substr(option.size() + 1));
      } else {
        continue;
      }
      break;
    }
  }
  if (run.mode == "baseline" && command.find(" --no-shim") == std::string::npos) {
    command += " --no-shim";  // the baseline half of --differential
  }
  return command;
}

std::string python_module(std::string_view path_from_root) {
  return joined(module_parts(std::string(path_from_root), /*importable=*/true), 0, ".");
}

std::string shell_word(std::string_view s) {
  constexpr std::string_view kPlain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%";
  if (!s.empty() && s.find_first_not_of(kPlain) == std::string_view::npos) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

}  // namespace devshim
