#include "runner/cli/devices_command.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "runner/engine/device_probe.h"

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
  // An installed probe in a venv without torch: found, but its LibTorch is not there.
  lines = device_recommendations(
      {{"probe_error", "venv/bin/devshim-probe exited with 127: libtorch_cpu.so: cannot open"},
       {"probe_path", "venv/bin/devshim-probe"}},
      {{"torch", nullptr}, {"torch_error", "No module"}});
  EXPECT_FALSE(mentions(lines, "Build devshim-probe")) << ::testing::PrintToString(lines);
  EXPECT_TRUE(mentions(lines, "install a torch of " + supported_torch_range()));
  lines = device_recommendations(cpu_only_probe(), {{"torch", "2.12.1+cpu"}});
  EXPECT_TRUE(mentions(lines, "LibTorch 2.13.0 and the Python's torch 2.12.1+cpu differ"));
}

TEST(TorchSupport, TheRangeIsTheOneCMakeListsSets) {
  EXPECT_EQ(supported_torch_range(),
            std::string(DEVSHIM_TORCH_OLDEST) + "\u2013" + DEVSHIM_TORCH_NEWEST);
  EXPECT_TRUE(torch_release_supported(DEVSHIM_TORCH_OLDEST));
  EXPECT_TRUE(torch_release_supported(std::string(DEVSHIM_TORCH_NEWEST) + ".9+cu130"));
  EXPECT_TRUE(torch_release_supported("2.14.1+cu130"));
  EXPECT_FALSE(torch_release_supported("2.8.0+cu128"));
  EXPECT_FALSE(torch_release_supported("2.12.1"));
  EXPECT_FALSE(torch_release_supported("2.99.0"));
  EXPECT_FALSE(torch_release_supported("3.0.0"));
  EXPECT_FALSE(torch_release_supported("2.130.0"));
  EXPECT_FALSE(torch_release_supported(""));
  EXPECT_FALSE(torch_release_supported("two.fourteen"));
}

TEST(TorchSupport, JudgesTheLoadedLibTorchOrTheInterpretersWhenTheProbeDidNotRun) {
  json probe = cpu_only_probe();
  probe["torch_version"] = "2.14.1+cu130";
  json judged = with_torch_support(probe, {{"torch", "2.8.0"}});
  EXPECT_EQ(judged["torch_support"], json({{"range", supported_torch_range()},
                                           {"torch", "2.14.1+cu130"},
                                           {"source", "probe"},
                                           {"supported", true}}));
  EXPECT_EQ(torch_support_line(judged), "");

  const json failed = {{"probe_error", "devshim-probe exited with 127: symbol lookup error"}};
  judged = with_torch_support(failed, {{"torch", "2.8.0+cu128"}});
  EXPECT_EQ(judged["torch_support"]["source"], "python");
  EXPECT_FALSE(judged["torch_support"]["supported"].get<bool>());
  EXPECT_NE(torch_support_line(judged).find("the Python's torch 2.8.0+cu128 is outside the torch "
                                            "releases devshim-probe supports"),
            std::string::npos)
      << torch_support_line(judged);
  const auto lines = device_recommendations(judged, {{"torch", "2.8.0+cu128"}});
  EXPECT_TRUE(mentions(lines, "Install a torch of " + supported_torch_range()))
      << ::testing::PrintToString(lines);
  EXPECT_FALSE(mentions(lines, "Build devshim-probe"));

  probe["torch_version"] = "2.16.0";
  judged = with_torch_support(probe, {{"torch", "2.16.0"}});
  EXPECT_NE(torch_support_line(judged).find("torch 2.16.0 is outside"), std::string::npos);
  // Nothing to judge: no probe, no torch in the interpreter.
  EXPECT_FALSE(with_torch_support(failed, {{"torch", nullptr}}).contains("torch_support"));
}

}  // namespace
}  // namespace devshim
