// What unittest's and pytest's traits share: the file's path and module, the shape of the command
// line, selecting tests on it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/engine/discovery.h"
#include "runner/engine/launch_plan.h"
#include "runner/engine/suite.h"

namespace devshim::python_tests {

/// The file's path from the project root: "tests/sub/test_x.py".
std::string test_path(const Suite& suite, const TestFile& file);

/// "tests/sub/test_x.py" → "tests.sub.test_x"; empty when a part is not a Python identifier.
std::string module_of(const Suite& suite, const TestFile& file);

/// `python -m <module_args...> <suite.args...> tests/sub/test_x.py`.
std::vector<std::string> command(const Suite& suite, const std::string& python,
                                 const TestFile& file, std::vector<std::string> module_args);

/// Replaces the file's path (the last argument of command) with the selectors.
void select(ProcessSpec& spec, const std::vector<std::string>& selectors);

/// `-k EXPR` before the file's path (pytest and unittest spell it alike).
void add_keyword(ProcessSpec& spec, const std::string& keyword);

}  // namespace devshim::python_tests
