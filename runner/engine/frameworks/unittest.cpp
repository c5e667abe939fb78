// `python -m unittest -v FILE`: results read from the log; reruns by dotted test ids.
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

  // "tests.test_x.MyTest.test_y"; a subtest "test_y (i=1)" reruns test_y.
  std::optional<std::vector<std::string>> rerun_selectors(
      const Suite& suite, const TestFile& file,
      const std::vector<TestCase>& failing) const override {
    return python_tests::rerun_ids(suite, file, failing,
                                   [](const TestCase& c, const std::string& rest) -> std::string {
                                     const std::string method = c.name.substr(0, c.name.find(" ("));
                                     if (rest.empty() || !python_tests::is_identifier(method))
                                       return "";
                                     return c.classname + "." + method;
                                   });
  }

  void select(ProcessSpec& spec, const std::vector<std::string>& selectors) const override {
    python_tests::select(spec, selectors);
  }
};

}  // namespace

const FrameworkTraits& unittest_traits() {
  static const UnittestTraits traits;
  return traits;
}

}  // namespace devshim
