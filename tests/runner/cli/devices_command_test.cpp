#include "runner/cli/devices_command.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace devshim {
namespace {

using nlohmann::json;

bool mentions(const std::vector<std::string>& lines, const std::string& words) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(words) != std::string::npos; });
}

// What devshim-probe prints on this machine (no accelerator), trimmed to what is read.
json cpu_only_probe() {
  return json::parse(R"({"probe": "devshim-probe/1", "torch_version": "2.13.0",
    "cuda": {"available": false, "device_count": 0, "devices": []}, "mps": {"available": false},
    "devices": [{"device": "cpu", "matmul": {"float32": true}, "recommended_dtype": "float32"}],
    "policy": {"activated": true, "policy": "default", "cuda_redirects_to": "cpu"}})");
}

TEST(DeviceRecommendations, NoAcceleratorSaysCudaCodeRunsOnTheCpu) {
  auto lines = device_recommendations(cpu_only_probe(), {{"torch", "2.13.0+cpu"}});
  EXPECT_TRUE(mentions(lines, "No accelerator")) << ::testing::PrintToString(lines);
  EXPECT_FALSE(mentions(lines, "differ"));
}

TEST(DeviceRecommendations, AcceleratorsGetTheirDtypeAndMpsItsFallback) {
  json probe = cpu_only_probe();
  probe["mps"]["available"] = true;
  probe["devices"].push_back({{"device", "mps"}, {"recommended_dtype", "float16"}});
  auto lines = device_recommendations(probe, {{"torch", "2.13.0"}});
  EXPECT_FALSE(mentions(lines, "No accelerator"));
  EXPECT_TRUE(mentions(lines, "On mps, prefer float16"));
  EXPECT_TRUE(mentions(lines, "PYTORCH_ENABLE_MPS_FALLBACK"));
}

TEST(DeviceRecommendations, MissingProbesAndMismatchedTorchesAreNamed) {
  auto lines = device_recommendations({{"probe_error", "devshim-probe not found"}},
                                      {{"torch", nullptr}, {"torch_error", "No module"}});
  EXPECT_TRUE(mentions(lines, "Build devshim-probe"));
  EXPECT_TRUE(mentions(lines, "torch does not import"));
  lines = device_recommendations(cpu_only_probe(), {{"torch", "2.12.1+cpu"}});
  EXPECT_TRUE(mentions(lines, "LibTorch 2.13.0 and the Python's torch 2.12.1+cpu differ"));
}

}  // namespace
}  // namespace devshim
