// `python -m unittest -v FILE`: results read from the log; reruns by dotted test ids.
#include <fmt/format.h>

#include "base/error.h"
#include "parsers/line_reader.h"
#include "parsers/unittest_parser.h"
#include "runner/engine/frameworks/framework_traits.h"
#include "runner/engine/frameworks/python_tests.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

class UnittestTraits final : public FrameworkTraits {
 public:
  bool runs_python() const override { return true; }

  std::vector<std::string> command(const Suite& suite, const std::string& python,
                                   const TestFile& file,
                                   const fs::path& /*junit_path*/) const override {
    return python_tests::command(suite, python, file, {"unittest", "-v"});
  }

  void plan(const Suite& suite, const std::string& python, const TestFile& file,
            const fs::path& logs_dir, ProcessSpec& spec) const override {
    spec.log_path = logs_dir / (file.rel_path + ".log");
    spec.argv = command(suite, python, file, {});
  }

  // Python 3.12+ exits 5 when no test ran.
  std::optional<FileStatus> exit_status(int code) const override {
    if (code == 5) return FileStatus::kNoTests;
    return std::nullopt;
  }

  ParsedFile parse(const Suite& /*suite*/, const TestFile& /*file*/, const std::string& test_file,
                   const ProcessSpec& spec, std::string& parsed_from) const override {
    std::error_code ec;
    if (!fs::exists(spec.log_path, ec)) return {};
    LineReader lines(spec.log_path);
    parsed_from = "log";
    return parse_unittest_log(lines, test_file);
  }

  void select(ProcessSpec& spec, const std::vector<std::string>& selectors) const override {
    python_tests::select(spec, selectors);
  }

  // Dotted ids: "tests.test_x" + ".MyTest.test_y" ("MyTest::test_y" and "MyTest.test_y" are
  // both accepted; a subtest's " (i=1)" names its test).
  std::vector<std::string> test_selectors(const Suite& suite, const TestFile& file) const override {
    const std::string module = python_tests::module_of(suite, file);
    if (module.empty()) {
      throw UsageError(fmt::format(
          "target {}::{}: unittest names tests by module, and {} is no importable module path",
          file.rel_path, file.tests.front(), python_tests::test_path(suite, file)));
    }
    std::vector<std::string> ids;
    for (const std::string& test : file.tests) {
      std::string dotted = test.substr(0, test.find(" ("));
      for (std::size_t p = 0; (p = dotted.find("::", p)) != std::string::npos;) {
        dotted.replace(p, 2, ".");
      }
      ids.push_back(module);
      ids.back().append(".").append(dotted);
    }
    return ids;
  }

  void add_keyword(ProcessSpec& spec, const std::string& keyword) const override {
    python_tests::add_keyword(spec, keyword);
  }
};

}  // namespace

const FrameworkTraits& unittest_traits() {
  static const UnittestTraits traits;
  return traits;
}

}  // namespace devshim
