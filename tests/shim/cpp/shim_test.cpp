// The Shim: the policy bound to the settings and a (fake) machine, with record and log.
#include "devshim/shim.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::read_file;
using testing::TempDir;

ShimConfig active(LogLevel level = LogLevel::kWarning) {
  ShimConfig c;
  c.activated = true;
  c.log_level = level;
  return c;
}

struct Fixture {
  explicit Fixture(ShimConfig config, Hardware hw = {})
      : shim(
            std::move(config),
            [this, hw] {
              ++probes;
              return hw;
            },
            [this](const std::string& line) { lines.push_back(line); }) {}
  int probes = 0;
  std::vector<std::string> lines;
  Shim shim;
};

std::optional<DeviceRequest> req(const char* spec) { return parse_device(spec); }

TEST(Shim, InactiveLeavesEveryRequestAndNeverProbes) {
  Fixture f(ShimConfig{});
  EXPECT_EQ(f.shim.mode(), ShimMode::kInactive);
  EXPECT_EQ(f.shim.redirect(req("cuda"), "api", std::source_location::current()), std::nullopt);
  EXPECT_EQ(f.shim.redirect(std::nullopt, "api", std::source_location::current()), std::nullopt);
  EXPECT_EQ(f.probes, 0);
  EXPECT_TRUE(f.shim.record().empty());
}

TEST(Shim, RedirectsOnACpuMachineAndRecordsOnlyWhatItRewrote) {
  Fixture f(active());
  EXPECT_EQ(f.shim.mode(), ShimMode::kRedirect);
  const auto d = f.shim.redirect(req("cuda:1"), "devshim::to", std::source_location::current());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->device_str(), "cpu");
  EXPECT_EQ(d->reason, "cuda requested: no accelerator present");
  // cpu and cpu:0 stand as they are; so does "no device given" (torch's default is the CPU).
  EXPECT_EQ(f.shim.redirect(req("cpu:0"), "devshim::to", std::source_location::current()),
            std::nullopt);
  EXPECT_EQ(f.shim.redirect(std::nullopt, "devshim::options", std::source_location::current()),
            std::nullopt);
  EXPECT_EQ(f.shim.redirect(req("meta"), "devshim::to", std::source_location::current()),
            std::nullopt);
  const auto rows = f.shim.record();
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].requested, "cuda:1");
  EXPECT_EQ(rows[0].used, "cpu");
  EXPECT_EQ(f.probes, 1);
}

TEST(Shim, NoDeviceGivenLandsOnTheAcceleratorAndIsRecordedAsNone) {
  Fixture f(active(), Hardware{true, 0});
  const auto d = f.shim.redirect(std::nullopt, "devshim::options", std::source_location::current());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->device_str(), "mps");
  ASSERT_EQ(f.shim.record().size(), 1U);
  EXPECT_EQ(f.shim.record()[0].requested, "(none)");
}

TEST(Shim, PassesThroughOnACudaMachineUnlessRedirectsAreAllowed) {
  Fixture f(active(), Hardware{false, 2});
  EXPECT_EQ(f.shim.mode(), ShimMode::kPassthrough);
  EXPECT_EQ(f.shim.redirect(req("cpu"), "api", std::source_location::current()), std::nullopt);
  EXPECT_EQ(f.shim.redirect(req("cuda:7"), "api", std::source_location::current()), std::nullopt);

  ShimConfig allowed = active();
  allowed.allow_redirects = true;
  Fixture g(allowed, Hardware{false, 2});
  EXPECT_EQ(g.shim.mode(), ShimMode::kRedirect);
  EXPECT_EQ(g.shim.redirect(req("cuda:7"), "api", std::source_location::current())->device_str(),
            "cuda:0");
  EXPECT_EQ(g.shim.redirect(req("cuda:1"), "api", std::source_location::current()), std::nullopt);
  EXPECT_EQ(g.shim.redirect(req("cpu"), "api", std::source_location::current())->device_str(),
            "cuda");

  // An MPS machine redirects without TORCH_ALLOW_REDIRECTS.
  Fixture m(active(), Hardware{true, 0});
  EXPECT_EQ(m.shim.mode(), ShimMode::kRedirect);
}

TEST(Shim, TheCpuOverrideTogglesAndIsKept) {
  Fixture f(active(), Hardware{true, 0});
  EXPECT_EQ(f.shim.redirect(req("cpu"), "a", std::source_location::current())->device_str(), "mps");
  const auto toggle = f.shim.redirect(req("cpu:-1"), "a", std::source_location::current());
  ASSERT_TRUE(toggle);
  EXPECT_EQ(toggle->device_str(), "cpu");
  EXPECT_TRUE(f.shim.cpu_override());
  EXPECT_EQ(f.shim.redirect(req("cpu"), "a", std::source_location::current()), std::nullopt);
  f.shim.redirect(req("cpu:-1"), "a", std::source_location::current());
  EXPECT_FALSE(f.shim.cpu_override());
  EXPECT_EQ(f.shim.redirect(req("cpu"), "a", std::source_location::current())->device_str(), "mps");
}

TEST(Shim, AcceleratorOnlyKeepsCpu) {
  ShimConfig c = active();
  c.policy = Policy::kAcceleratorOnly;
  Fixture f(c, Hardware{true, 0});
  EXPECT_EQ(f.shim.redirect(req("cpu"), "a", std::source_location::current()), std::nullopt);
  EXPECT_EQ(f.shim.redirect(req("cuda"), "a", std::source_location::current())->device_str(),
            "mps");
}

TEST(Shim, InfoLogsOneLinePerNewRowNeverOnePerCall) {
  Fixture f(active(LogLevel::kInfo));
  const auto site = std::source_location::current();
  for (int i = 0; i < 5; ++i) f.shim.redirect(req("cuda"), "devshim::to", site);
  f.shim.redirect(req("cuda:1"), "devshim::to", site);
  ASSERT_EQ(f.lines.size(), 2U);
  EXPECT_EQ(f.lines[0], "devshim INFO: devshim::to: cuda -> cpu at " +
                            std::string(site.file_name()) + ":" + std::to_string(site.line()) +
                            " (TestBody)");
  EXPECT_EQ(f.shim.record()[0].count, 5);
}

TEST(Shim, DebugAlsoLogsTheHardwareWarningLogsNeither) {
  Fixture debug(active(LogLevel::kDebug), Hardware{false, 0});
  debug.shim.redirect(req("cuda"), "a", std::source_location::current());
  ASSERT_EQ(debug.lines.size(), 2U);
  EXPECT_EQ(debug.lines[0],
            "devshim DEBUG: hardware: accelerator=none mps=false cuda_device_count=0; "
            "policy=default; mode=redirect");
  Fixture quiet(active());
  quiet.shim.redirect(req("cuda"), "a", std::source_location::current());
  EXPECT_TRUE(quiet.lines.empty());
}

TEST(Shim, ConfigProblemsAreLoggedAsErrors) {
  ShimConfig c = active();
  c.problems = {
      "TORCHDEVICE_LOG_LEVEL='LOUD' is not one of DEBUG, INFO, WARNING, ERROR; using WARNING"};
  Fixture f(c);
  ASSERT_EQ(f.lines.size(), 1U);
  EXPECT_EQ(f.lines[0].rfind("devshim ERROR: TORCHDEVICE_LOG_LEVEL='LOUD'", 0), 0U) << f.lines[0];
}

TEST(Shim, WritesItsRecordWhenActiveAndAPathIsSet) {
  TempDir dir;
  ShimConfig c = active();
  Fixture none(c);
  EXPECT_FALSE(none.shim.write_record_now());  // no path
  c.record_path = (dir / "rec.json").string();
  Fixture f(c);
  f.shim.redirect(req("cuda"), "devshim::to", std::source_location::current());
  ASSERT_TRUE(f.shim.write_record_now());
  const auto doc = nlohmann::json::parse(read_file(dir / "rec.json"));
  EXPECT_EQ(doc["shim"], "cpp");
  EXPECT_EQ(doc["redirections"][0]["count"], 1);
  EXPECT_EQ(doc["hardware"]["accelerator"], nullptr);

  ShimConfig bad = active();
  bad.record_path = (dir / "rec.json/inside").string();  // a file is in the way
  Fixture g(bad);
  EXPECT_FALSE(g.shim.write_record_now());
  ASSERT_EQ(g.lines.size(), 1U);
  EXPECT_EQ(g.lines[0].rfind("devshim ERROR: could not write the redirection record", 0), 0U);
}

TEST(Shim, AForkedChildCountsOnlyItsOwnCalls) {
  TempDir dir;
  ShimConfig c = active();
  c.record_path = (dir / "rec.json").string();
  Fixture f(c);
  const auto site = std::source_location::current();
  f.shim.redirect(req("cuda"), "devshim::to", site);
  f.shim.redirect(req("cuda"), "devshim::to", site);
  f.shim.before_fork();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    f.shim.after_fork_in_child();
    f.shim.redirect(req("cuda"), "devshim::to", site);
    ::_exit(f.shim.write_record_now() && f.shim.record().at(0).count == 1 ? 0 : 1);
  }
  f.shim.after_fork_in_parent();
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(f.shim.write_record_now());
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "rec.json"))["redirections"][0]["count"], 3);
}

TEST(Shim, ResetForgetsEverything) {
  Fixture f(active(), Hardware{true, 0});
  f.shim.redirect(req("cpu:-1"), "a", std::source_location::current());
  f.shim.reset(ShimConfig{}, [] { return Hardware{}; });
  EXPECT_FALSE(f.shim.cpu_override());
  EXPECT_TRUE(f.shim.record().empty());
  EXPECT_EQ(f.shim.mode(), ShimMode::kInactive);
}

TEST(SameDevice, IndexNoneAndZeroAreTheSameForCpuAndMpsOnly) {
  EXPECT_TRUE(same_device({"cpu", std::nullopt}, {"cpu", 0}));
  EXPECT_TRUE(same_device({"mps", 0}, {"mps", std::nullopt}));
  EXPECT_FALSE(same_device({"cuda", std::nullopt}, {"cuda", 0}));
  EXPECT_FALSE(same_device({"cpu", -1}, {"cpu", std::nullopt}));
  EXPECT_FALSE(same_device({"cpu", std::nullopt}, {"mps", std::nullopt}));
}

}  // namespace
}  // namespace devshim
