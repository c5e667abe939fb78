// collect_results against every real captured log (tests/parsers/fixtures): the file status it
// decides must be the one the fixture's ground truth gives for how that process really ended.
#include <gtest/gtest.h>

#include <algorithm>
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
  const json& unfinished = e["unfinished"];
  if (unfinished.is_object() && unfinished.contains("exception")) {
    // It ended the session itself: an error with the exception it raised, not a culprit.
    const auto it = std::find_if(c.cases.begin(), c.cases.end(), [&](const TestCase& t) {
      return t.name == unfinished["name"].get<std::string>();
    });
    ASSERT_NE(it, c.cases.end()) << "the test that ended the session is recorded";
    EXPECT_EQ(to_string(it->status), "error");
    EXPECT_EQ(it->exception, unfinished["exception"].get<std::string>());
    EXPECT_TRUE(it->culprit.empty());
    if (it->exception == "KeyboardInterrupt") {  // pytest prints its line, not pytest.exit()'s
      EXPECT_EQ(it->source.line, unfinished["failure_line"].get<int>()) << it->source.path;
    } else {
      EXPECT_GT(it->source.line, 0) << "the line of its def";
    }
    EXPECT_NE(c.note.find("did not run"), std::string::npos) << c.note;
  } else if (unfinished.is_object()) {
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
