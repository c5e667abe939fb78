// What unittest's and pytest's traits share: the file's path and module, fixture names that
// cannot be rerun alone, the shape of the command line.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "parsers/test_result.h"
#include "runner/engine/discovery.h"
#include "runner/engine/launch_plan.h"
#include "runner/engine/suite.h"

namespace devshim::python_tests {

/// The file's path from the project root: "tests/sub/test_x.py".
std::string test_path(const Suite& suite, const TestFile& file);

/// "tests/sub/test_x.py" → "tests.sub.test_x"; empty when a part is not a Python identifier.
std::string module_of(const Suite& suite, const TestFile& file);

/// A name made of letters, digits and '_', not starting with a digit.
bool is_identifier(const std::string& s);

/// unittest's class and module fixtures ("setUpClass (tests.test_x.MyTest)"), and names that
/// are no test's ("<collection>", ""): they cannot be run alone.
bool is_fixture_name(const std::string& name);

/// The rerun ids of failing tests of file, each id_of(case, rest), rest being the classname after
/// the file's module ("" or ".Class[.Inner]"); each id once, in order. nullopt when a test cannot
/// be named: a fixture, a classname outside the module, or id_of returning "".
std::optional<std::vector<std::string>> rerun_ids(
    const Suite& suite, const TestFile& file, const std::vector<TestCase>& failing,
    const std::function<std::string(const TestCase&, const std::string& rest)>& id_of);

/// `python -m <module_args...> <suite.args...> tests/sub/test_x.py`.
std::vector<std::string> command(const Suite& suite, const std::string& python,
                                 const TestFile& file, std::vector<std::string> module_args);

/// Replaces the file's path (the last argument of command) with the selectors.
void select(ProcessSpec& spec, const std::vector<std::string>& selectors);

}  // namespace devshim::python_tests
