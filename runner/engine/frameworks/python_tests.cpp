#include "runner/engine/frameworks/python_tests.h"

#include "runner/results/native_id.h"

namespace devshim::python_tests {

namespace fs = std::filesystem;

std::string test_path(const Suite& suite, const TestFile& file) {
  return (fs::path(suite.tests_dir) / file.rel_path).lexically_normal().generic_string();
}

std::string module_of(const Suite& suite, const TestFile& file) {
  return python_module(test_path(suite, file));
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

void add_keyword(ProcessSpec& spec, const std::string& keyword) {
  spec.argv.insert(spec.argv.end() - 1, {"-k", keyword});
}

}  // namespace devshim::python_tests
