// `runner report` on the recorded sample run of tests/reports/report_fixture.cpp
// (runner/cli/report_command.h).
#include "runner/cli/report_command.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "reports/write_reports.h"
#include "runner/results/store.h"
#include "tests/reports/report_fixture.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

class ReportCommand : public ::testing::Test {
 protected:
  void SetUp() override { testing::record_sample_run(run_); }
  testing::RecordedRun run_;
};

TEST_F(ReportCommand, AgainstWritesBesideTheRunsReportsAndKeepsItsSummary) {
  std::int64_t previous = 0;
  {
    Store store(run_.db());
    write_reports(store, run_.run_id, run_.out());
    previous = store.run(run_.run_id)->previous_run;
  }
  const std::string summary = Store(run_.db()).run(run_.run_id)->summary;
  ASSERT_FALSE(summary.empty());
  ::testing::internal::CaptureStdout();
  report_command(run_.db(), std::to_string(run_.run_id), "md,json", "", "latest");
  const std::string printed = ::testing::internal::GetCapturedStdout();
  const auto dir = run_.out() / fmt::format("against-{}", run_.run_id);
  EXPECT_NE(printed.find((dir / "report.md").string()), std::string::npos) << printed;
  EXPECT_TRUE(std::filesystem::exists(dir / "report.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "report.html")) << "only the formats asked for";
  const auto j = nlohmann::json::parse(testing::read_file(dir / "report.json"));
  EXPECT_EQ(j["previous"]["run"], run_.run_id);
  const std::string own = testing::read_file(run_.out() / "report.md");
  EXPECT_NE(own.find(fmt::format("## Changes since run {} (", previous)), std::string::npos)
      << "the run's own report is left as it was";
  EXPECT_EQ(Store(run_.db()).run(run_.run_id)->summary, summary);
  EXPECT_THROW(report_command(run_.db(), "latest", "", "", "latest~9"), UsageError);
}

}  // namespace
}  // namespace devshim
