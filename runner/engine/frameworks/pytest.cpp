// `python -m pytest -v -ra --junitxml=… FILE`: results from the JUnit XML refined by the log,
// else the log; reruns by node ids.
#include <algorithm>

#include "parsers/pytest_junit.h"
#include "runner/engine/frameworks/framework_traits.h"
#include "runner/engine/frameworks/python_tests.h"

namespace devshim {

namespace fs = std::filesystem;

namespace {

class PytestTraits final : public FrameworkTraits {
 public:
  bool runs_python() const override { return true; }

  // `-ra`, not `-rA`: the passes' summary that `-rA` adds costs pytest time quadratic in a file's
  // tests (each pass rescans every report: 10,000 tests took 109 s against 6 s), and the parsers
  // read the passes from the progress lines and the XML (bench/pytest_summary_bench.py).
  std::vector<std::string> command(const Suite& suite, const std::string& python,
                                   const TestFile& file,
                                   const fs::path& junit_path) const override {
    return python_tests::command(suite, python, file,
                                 {"pytest", "-v", "-ra", "--junitxml=" + junit_path.string(), "-o",
                                  "junit_family=xunit1", "-p", "no:cacheprovider"});
  }

  void plan(const Suite& suite, const std::string& python, const TestFile& file,
            const fs::path& logs_dir, ProcessSpec& spec) const override {
    spec.log_path = logs_dir / (file.rel_path + ".log");
    spec.junit_path = logs_dir / (file.rel_path + ".xml");
    spec.argv = command(suite, python, file, spec.junit_path);
  }

  // 2: interrupted or usage error, 4: command line usage error, 5: no tests collected.
  std::optional<FileStatus> exit_status(int code) const override {
    if (code == 5) return FileStatus::kNoTests;
    if (code == 2 || code == 4) return FileStatus::kError;
    return std::nullopt;
  }

  // The XML when pytest finished writing it (refined by the log: xpasses, closing counts), else
  // the log alone.
  ParsedFile parse(const Suite& /*suite*/, const TestFile& /*file*/,
                   const std::string& /*test_file*/, const ProcessSpec& spec,
                   std::string& parsed_from) const override {
    std::error_code ec;
    const bool xml = !spec.junit_path.empty() && fs::exists(spec.junit_path, ec) &&
                     parse_pytest_junit(spec.junit_path).has_value();
    if (!xml && !fs::exists(spec.log_path, ec)) return {};
    ParsedFile parsed = parse_pytest_results(spec.junit_path, spec.log_path);
    parsed_from = xml ? "junit" : "log";
    return parsed;
  }

  void select(ProcessSpec& spec, const std::vector<std::string>& selectors) const override {
    python_tests::select(spec, selectors);
  }

  // Node ids: "tests/test_x.py" + "::TestC::test_y[p-1]".
  std::vector<std::string> test_selectors(const Suite& suite, const TestFile& file) const override {
    std::vector<std::string> ids;
    for (const std::string& test : file.tests) {
      ids.push_back(python_tests::test_path(suite, file) + "::" + test);
    }
    return ids;
  }

  // After "-m pytest": the plugin is loaded before any of the suite's own arguments.
  void name_tests_in_record(ProcessSpec& spec) const override {
    const auto it = std::find(spec.argv.begin(), spec.argv.end(), "pytest");
    if (it != spec.argv.end()) spec.argv.insert(it + 1, {"-p", "devshim.pytest_plugin"});
  }

  void add_keyword(ProcessSpec& spec, const std::string& keyword) const override {
    python_tests::add_keyword(spec, keyword);
  }

  bool deselect(ProcessSpec& spec, const std::vector<std::string>& selectors) const override {
    // Before the file's path, which the command puts last.
    std::vector<std::string> args;
    args.reserve(2 * selectors.size());
    for (const std::string& id : selectors) {
      args.emplace_back("--deselect");
      args.push_back(id);
    }
    spec.argv.insert(spec.argv.end() - 1, args.begin(), args.end());
    return true;
  }
};

}  // namespace

const FrameworkTraits& pytest_traits() {
  static const PytestTraits traits;
  return traits;
}

}  // namespace devshim
