// The fuzz targets' checks (fuzz/fuzz_checks.h, runner_checks.h, report_checks.h) in the
// ordinary test run: every seed in fuzz/corpus/<target>/ and every input a fuzzer found in
// fuzz/regressions/<target>/ goes through the same function the libFuzzer target calls, with a
// violated check failing the test (the fuzzer aborts instead). All nine targets, built by the
// ordinary compiler without libFuzzer; docs/reliability.md lists what the checks guarantee.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/fuzz_checks.h"
#include "fuzz/report_checks.h"
#include "fuzz/runner_checks.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzzDir = FUZZ_DIR;

struct Target {
  const char* name;
  void (*run)(std::string_view);
};

// The test's name in ctest's list: without it GoogleTest prints the bytes of the pointers.
void PrintTo(const Target& t, std::ostream* os) { *os << t.name; }

const Target kTargets[] = {
    {"unittest", &fuzz::run_unittest},
    {"pytest_text", &fuzz::run_pytest_text},
    {"pytest_junit", &fuzz::run_pytest_junit},
    {"gtest_xml", &fuzz::run_gtest_xml},
    {"gtest_text", &fuzz::run_gtest_text},
    {"traceback", &fuzz::run_traceback},
    {"suite", &fuzz::run_suite},
    {"import_log", &fuzz::run_import_log},
    {"report", &fuzz::run_report},
};

std::vector<fs::path> inputs(const std::string& target) {
  std::vector<fs::path> out;
  for (const char* kind : {"corpus", "regressions"}) {
    const fs::path dir = kFuzzDir / kind / target;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_regular_file()) out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class FuzzRegressions : public ::testing::TestWithParam<Target> {
 protected:
  void SetUp() override {
    saved_ = fuzz::on_violation();
    fuzz::on_violation() = [](const char* what) { throw std::logic_error(what); };
  }
  void TearDown() override {
    fuzz::on_violation() = saved_;
    std::error_code ec;  // run_suite's scratch folder
    fs::remove_all(fs::temp_directory_path() / ("devshim_fuzz_suite_" + std::to_string(::getpid())),
                   ec);
  }

 private:
  fuzz::ViolationHandler saved_ = nullptr;
};

TEST_P(FuzzRegressions, SeedsAndFoundInputsPassTheFuzzChecks) {
  const Target t = GetParam();
  const std::vector<fs::path> files = inputs(t.name);
  ASSERT_FALSE(files.empty()) << "no seeds in " << (kFuzzDir / "corpus" / t.name);
  for (const fs::path& f : files) {
    const std::string data = read_file(f);
    try {
      t.run(data);
    } catch (const std::exception& e) {
      ADD_FAILURE() << f << ": " << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fuzz, FuzzRegressions, ::testing::ValuesIn(kTargets),
                         [](const auto& info) { return std::string(info.param.name); });

// The checks themselves catch what they are meant to: a ParsedFile that breaks a promise.
TEST(FuzzChecks, ViolationReachesTheHandler) {
  const fuzz::ViolationHandler saved = fuzz::on_violation();
  fuzz::on_violation() = [](const char* what) { throw std::logic_error(what); };
  ParsedFile bad;
  bad.reported.failed = -1;
  EXPECT_THROW(fuzz::check_parsed(bad), std::logic_error);
  TestCase unfinished;
  unfinished.status = CaseStatus::kPassed;
  bad = ParsedFile{};
  bad.unfinished = unfinished;
  EXPECT_THROW(fuzz::check_parsed(bad), std::logic_error);
  bad = ParsedFile{};
  bad.unfinished_ended_session = true;
  EXPECT_THROW(fuzz::check_parsed(bad), std::logic_error);
  fuzz::on_violation() = saved;
}

}  // namespace
}  // namespace devshim
