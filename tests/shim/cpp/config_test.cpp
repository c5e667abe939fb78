// The environment variables of the C++ shim: the same values and defaults as the Python shim's
// (shim/python/devshim/config.py), except that an unknown TORCHDEVICE_POLICY throws.
#include "devshim/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

namespace devshim {
namespace {

ShimConfig config_of(const std::map<std::string, std::string>& env) {
  return config_from([&env](const char* name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

TEST(Truthy, OneTwoThreeFourWordsInAnyCaseWithSpaces) {
  for (const char* yes : {"1", "true", "TRUE", " yes ", "On", "\ton\n"})
    EXPECT_TRUE(truthy(yes)) << yes;
  for (const char* no : {"", "0", "false", "no", "off", "2", "y", "enable"})
    EXPECT_FALSE(truthy(no)) << no;
  EXPECT_FALSE(truthy(std::nullopt));
}

TEST(ShimConfig, DefaultsWhenNothingIsSet) {
  const ShimConfig c = config_of({});
  EXPECT_FALSE(c.activated);
  EXPECT_FALSE(c.allow_redirects);
  EXPECT_EQ(c.policy, Policy::kDefault);
  EXPECT_EQ(c.log_level, LogLevel::kWarning);
  EXPECT_TRUE(c.record_path.empty());
  EXPECT_TRUE(c.problems.empty());
}

TEST(ShimConfig, ReadsEveryVariable) {
  const ShimConfig c = config_of({{"ACTIVATE_TORCH_DEVICE", " Yes "},
                                  {"TORCH_ALLOW_REDIRECTS", "on"},
                                  {"TORCHDEVICE_POLICY", " accelerator-only "},
                                  {"TORCHDEVICE_LOG_LEVEL", "info"},
                                  {"TORCHDEVICE_RECORD", "/tmp/x/../rec.json"}});
  EXPECT_TRUE(c.activated);
  EXPECT_TRUE(c.allow_redirects);
  EXPECT_EQ(c.policy, Policy::kAcceleratorOnly);
  EXPECT_EQ(c.log_level, LogLevel::kInfo);
  EXPECT_EQ(c.record_path, "/tmp/rec.json");
}

TEST(ShimConfig, RelativeRecordPathsAreMadeAbsolute) {
  const ShimConfig c = config_of({{"TORCHDEVICE_RECORD", "rec.json"}});
  EXPECT_EQ(c.record_path, (std::filesystem::current_path() / "rec.json").string());
}

TEST(ShimConfig, UnknownPolicyThrowsNamingTheVariable) {
  try {
    config_of({{"ACTIVATE_TORCH_DEVICE", "1"}, {"TORCHDEVICE_POLICY", "sometimes"}});
    FAIL() << "no exception";
  } catch (const ShimConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("TORCHDEVICE_POLICY='sometimes'"), std::string::npos) << what;
    EXPECT_NE(what.find("default or accelerator-only"), std::string::npos) << what;
  }
  // std::invalid_argument is what callers may catch.
  EXPECT_THROW(config_of({{"ACTIVATE_TORCH_DEVICE", "1"}, {"TORCHDEVICE_POLICY", "x"}}),
               std::invalid_argument);
  // An inactive shim never reads the policy.
  EXPECT_NO_THROW(config_of({{"TORCHDEVICE_POLICY", "sometimes"}}));
  // Empty (or blank) means the default, as in the Python shim.
  EXPECT_EQ(config_of({{"ACTIVATE_TORCH_DEVICE", "1"}, {"TORCHDEVICE_POLICY", " "}}).policy,
            Policy::kDefault);
}

TEST(ShimConfig, UnknownLogLevelFallsBackToWarningAndSaysSo) {
  const ShimConfig c = config_of({{"TORCHDEVICE_LOG_LEVEL", "loud"}});
  EXPECT_EQ(c.log_level, LogLevel::kWarning);
  ASSERT_EQ(c.problems.size(), 1U);
  EXPECT_EQ(
      c.problems[0],
      "TORCHDEVICE_LOG_LEVEL='LOUD' is not one of DEBUG, INFO, WARNING, ERROR; using WARNING");
  for (const auto& [text, level] : std::map<std::string, LogLevel>{{"debug", LogLevel::kDebug},
                                                                   {"Warning", LogLevel::kWarning},
                                                                   {" ERROR", LogLevel::kError}}) {
    EXPECT_EQ(config_of({{"TORCHDEVICE_LOG_LEVEL", text}}).log_level, level) << text;
  }
}

}  // namespace
}  // namespace devshim
