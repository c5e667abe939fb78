#include "runner/engine/frameworks/python_tests.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace devshim::python_tests {

namespace fs = std::filesystem;

std::string test_path(const Suite& suite, const TestFile& file) {
  return (fs::path(suite.tests_dir) / file.rel_path).lexically_normal().generic_string();
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

std::string module_of(const Suite& suite, const TestFile& file) {
  fs::path p = (fs::path(suite.tests_dir) / file.rel_path).lexically_normal();
  if (p.extension() != ".py") return "";
  p.replace_extension();
  std::string dotted;
  for (const auto& part : p) {
    if (!is_identifier(part.string())) return "";
    dotted += (dotted.empty() ? "" : ".") + part.string();
  }
  return dotted;
}

bool is_fixture_name(const std::string& name) {
  static const std::set<std::string> fixtures{"setUpClass", "tearDownClass", "setUpModule",
                                              "tearDownModule"};
  // unittest names a fixture error "setUpClass (tests.test_x.MyTest)".
  return name.empty() || name[0] == '<' || fixtures.count(name) > 0 ||
         fixtures.count(name.substr(0, name.find(" ("))) > 0;
}

std::optional<std::vector<std::string>> rerun_ids(
    const Suite& suite, const TestFile& file, const std::vector<TestCase>& failing,
    const std::function<std::string(const TestCase&, const std::string& rest)>& id_of) {
  const std::string module = module_of(suite, file);
  if (module.empty()) return std::nullopt;
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const TestCase& c : failing) {
    if (is_fixture_name(c.name) || c.classname.rfind(module, 0) != 0) return std::nullopt;
    const std::string rest = c.classname.substr(module.size());
    if (!rest.empty() && rest[0] != '.') return std::nullopt;
    std::string id = id_of(c, rest);
    if (id.empty()) return std::nullopt;
    if (seen.insert(id).second) ids.push_back(std::move(id));
  }
  return ids;
}

std::vector<std::string> command(const Suite& suite, const std::string& python,
                                 const TestFile& file, std::vector<std::string> module_args) {
  std::vector<std::string> argv{python, "-m"};
  argv.insert(argv.end(), module_args.begin(), module_args.end());
  argv.insert(argv.end(), suite.args.begin(), suite.args.end());
  argv.push_back(test_path(suite, file));
  return argv;
}

void select(ProcessSpec& spec, const std::vector<std::string>& selectors) {
  spec.argv.pop_back();  // the file's path: command puts it last
  spec.argv.insert(spec.argv.end(), selectors.begin(), selectors.end());
}

}  // namespace devshim::python_tests
