// The C++ policy against the test vectors the Python shim is checked against too
// (shim/vectors/redirection.json; tests/shim/test_policy.py): a policy change made in one
// language only fails a test.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "devshim/policy.h"

namespace devshim {
namespace {

using nlohmann::json;

struct Vector {
  std::string id;
  json raw;
};

// GoogleTest prints a parameter into the test's listing, which ctest's test names come from:
// without this it prints the struct's bytes, heap addresses included, so names changed per build.
void PrintTo(const Vector& v, std::ostream* os) { *os << v.id; }

json load_document() {
  std::ifstream in(DEVSHIM_VECTORS_PATH);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

std::vector<Vector> load_vectors() {
  const json doc = load_document();
  std::vector<Vector> out;
  if (doc.is_discarded() || !doc.contains("vectors")) return out;
  for (const json& v : doc["vectors"]) {
    std::string request = v["request"].is_null() ? "none" : v["request"].get<std::string>();
    std::string id = request + "_" + v["hardware_name"].get<std::string>() + "_override" +
                     (v["override"].get<bool>() ? "1" : "0") + "_" +
                     v["policy"].get<std::string>() + "_" + std::to_string(out.size());
    for (char& c : id) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    out.push_back({id, v});
  }
  return out;
}

TEST(PolicyVectorsFile, LoadsAndCoversEveryCellOfTheTable) {
  const json doc = load_document();
  ASSERT_FALSE(doc.is_discarded()) << DEVSHIM_VECTORS_PATH << " is not JSON";
  EXPECT_EQ(doc["schema_version"], 1);
  const auto vectors = load_vectors();
  ASSERT_GE(vectors.size(), 40U);
  std::set<std::string> kinds, hardware, policies;
  bool toggle = false;
  for (const auto& v : vectors) {
    const std::string req =
        v.raw["request"].is_null() ? "none" : v.raw["request"].get<std::string>();
    kinds.insert(req.substr(0, req.find(':')));
    hardware.insert(v.raw["hardware_name"].get<std::string>());
    policies.insert(v.raw["policy"].get<std::string>());
    toggle = toggle || req == "cpu:-1";
  }
  for (const char* k : {"none", "cpu", "mps", "cuda", "meta"}) EXPECT_TRUE(kinds.count(k)) << k;
  for (const char* h : {"mps", "cuda2", "none"}) EXPECT_TRUE(hardware.count(h)) << h;
  EXPECT_EQ(policies, (std::set<std::string>{"default", "accelerator-only"}));
  EXPECT_TRUE(toggle);
}

class PolicyVector : public ::testing::TestWithParam<Vector> {};

TEST_P(PolicyVector, ResolvesAsExpected) {
  const json& v = GetParam().raw;
  const Hardware hw{v["hardware"]["mps"].get<bool>(),
                    v["hardware"]["cuda_device_count"].get<int>()};
  std::optional<DeviceRequest> request;
  if (!v["request"].is_null()) request = parse_device(v["request"].get<std::string>());
  const Decision d =
      resolve(request, hw, v["override"].get<bool>(), parse_policy(v["policy"].get<std::string>()));
  EXPECT_EQ(d.device_str(), v["expected"]["device"].get<std::string>()) << d.reason;
  EXPECT_EQ(d.override, v["expected"]["override"].get<bool>()) << d.reason;
  EXPECT_FALSE(d.reason.empty());
}

INSTANTIATE_TEST_SUITE_P(Shared, PolicyVector, ::testing::ValuesIn(load_vectors()),
                         [](const ::testing::TestParamInfo<Vector>& info) {
                           return info.param.id;
                         });

TEST(ParseDevice, StringsAsTorchWritesThem) {
  EXPECT_EQ(parse_device("cuda:1"), (DeviceRequest{"cuda", 1}));
  EXPECT_EQ(parse_device(" mps "), (DeviceRequest{"mps", std::nullopt}));
  EXPECT_EQ(parse_device("cpu:-1"), (DeviceRequest{"cpu", -1}));
  EXPECT_EQ(parse_device("meta"), (DeviceRequest{"meta", std::nullopt}));
  EXPECT_EQ(DeviceRequest::cuda(1), (DeviceRequest{"cuda", 1}));
  for (const char* bad : {"", "  ", ":1", "cuda:", "cuda:x", "cuda:1x", "cuda:--1", "cuda:+1"}) {
    EXPECT_THROW(parse_device(bad), std::invalid_argument) << bad;
  }
  try {
    parse_device("cuda:x");
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "not a device: 'cuda:x'");
  }
  EXPECT_EQ(format_device({"cuda", 1}), "cuda:1");
  EXPECT_EQ(format_device({"cpu", std::nullopt}), "cpu");
}

TEST(Resolve, TheOverrideIsStateTheCallerKeeps) {
  const Hardware mps{true, 0};
  const Decision on = resolve(parse_device("cpu:-1"), mps);
  EXPECT_TRUE(on.override);
  EXPECT_EQ(on.device_str(), "cpu");
  EXPECT_EQ(resolve(parse_device("cpu"), mps, on.override).device_str(), "cpu");
  const Decision off = resolve(parse_device("cpu:-1"), mps, true);
  EXPECT_FALSE(off.override);
  EXPECT_EQ(resolve(parse_device("cpu"), mps, off.override).device_str(), "mps");
}

TEST(Resolve, ReasonsSayWhy) {
  const Hardware cuda2{false, 2};
  EXPECT_EQ(resolve(parse_device("cuda:7"), cuda2).reason,
            "cuda requested: cuda:7 does not exist (2 devices): cuda:0");
  EXPECT_EQ(resolve(std::nullopt, Hardware{}).reason, "no device given: no accelerator present");
  EXPECT_EQ(resolve(parse_device("xpu:1"), cuda2).reason, "xpu is never redirected");
}

TEST(Policy, NamesRoundTripAndUnknownNamesThrow) {
  EXPECT_EQ(parse_policy("default"), Policy::kDefault);
  EXPECT_EQ(parse_policy("accelerator-only"), Policy::kAcceleratorOnly);
  EXPECT_STREQ(policy_name(Policy::kAcceleratorOnly), "accelerator-only");
  EXPECT_THROW(parse_policy("sometimes"), std::invalid_argument);
  EXPECT_EQ(Hardware({true, 1}).accelerator(), "mps");
  EXPECT_EQ(Hardware({false, 1}).accelerator(), "cuda");
  EXPECT_EQ(Hardware({false, 0}).accelerator(), std::nullopt);
}

}  // namespace
}  // namespace devshim
