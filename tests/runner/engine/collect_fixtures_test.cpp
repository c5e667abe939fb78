// collect_results against every real captured log (tests/parsers/fixtures): the file status it
// decides must be the one the fixture's ground truth gives for how that process really ended.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "runner/engine/collect.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kFixtures = PARSER_FIXTURES_DIR;

std::vector<std::string> fixtures() {
  std::ifstream in(kFixtures / "manifest.json");
  const json manifest = json::parse(in);
  std::vector<std::string> out;
  for (const auto& f : manifest["fixtures"]) out.push_back(f["expected"].get<std::string>());
  return out;
}

class CollectFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(CollectFixture, FileStatusIsTheOneTheRealRunHad) {
  std::ifstream in(kFixtures / GetParam());
  const json e = json::parse(in);
  Suite suite;
  suite.name = "fixtures";
  suite.project_root = kFixtures / "sources";
  suite.tests_dir = "tests";
  suite.framework = e["framework"] == "pytest" ? Framework::kPytest : Framework::kUnittest;
  const std::string source = e["source"].get<std::string>();  // "sources/tests/x.py"
  TestFile file{fs::path(source).lexically_relative("sources/tests").generic_string(), {}};
  ProcessSpec spec;
  spec.log_path = kFixtures / e["log"].get<std::string>();
  if (suite.framework == Framework::kPytest) {
    spec.junit_path = e["junit_xml"].is_string() ? kFixtures / e["junit_xml"].get<std::string>()
                                                 : kFixtures / "no-such.xml";
  }
  ProcessResult r;
  if (e["exit"]["code"].is_number()) r.exit_code = e["exit"]["code"].get<int>();
  if (e["exit"]["signal"].is_number()) r.signal = e["exit"]["signal"].get<int>();
  r.timed_out = e["exit"]["timed_out"].get<bool>();
  CollectedFile c = collect_results(suite, file, spec, r);
  EXPECT_EQ(to_string(c.status), e["file_status"].get<std::string>());
  if (e["unfinished"].is_object()) {
    bool culprit = false;
    for (const auto& t : c.cases) culprit = culprit || !t.culprit.empty();
    EXPECT_TRUE(culprit) << "the test that was running is recorded";
  }
}

INSTANTIATE_TEST_SUITE_P(RealLogs, CollectFixture, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = fs::path(info.param).stem().stem().string();
                           for (auto& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace devshim
