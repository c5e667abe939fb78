// The LibTorch helpers against the process's shim (reset to a known state by each test). On this
// machine LibTorch has neither CUDA nor MPS, so tensors land on the CPU; a fake CUDA machine
// checks the devices the helpers compute without allocating on them.
#include <ATen/core/Tensor.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <gtest/gtest.h>
#include <torch/version.h>

#include <nlohmann/json.hpp>

#include "devshim/devshim.h"
#include "devshim/probe.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

using testing::read_file;
using testing::TempDir;

class Helpers : public ::testing::Test {
 protected:
  void SetUp() override { use(active_config(), detect_hardware); }
  void TearDown() override { global_shim().reset(ShimConfig{}, detect_hardware); }
  static ShimConfig active_config() {
    ShimConfig c;
    c.activated = true;
    return c;
  }
  static void use(ShimConfig config, Shim::HardwareProbe hw) {
    global_shim().reset(std::move(config), std::move(hw));
  }
};

TEST_F(Helpers, ThisMachineHasNoAccelerator) {
  EXPECT_EQ(detect_hardware(), (Hardware{false, 0}));
  EXPECT_EQ(global_shim().mode(), ShimMode::kRedirect);
}

TEST_F(Helpers, DeviceStringsAndDeviceObjectsLandOnTheCpu) {
  EXPECT_EQ(devshim::device("cuda"), c10::Device(c10::kCPU));
  EXPECT_EQ(devshim::device("cuda:1"), c10::Device(c10::kCPU));
  EXPECT_EQ(devshim::device(c10::Device(c10::kCUDA, 1)), c10::Device(c10::kCPU));
  EXPECT_EQ(devshim::device(c10::kCUDA), c10::Device(c10::kCPU));
  EXPECT_EQ(devshim::device("mps"), c10::Device(c10::kCPU));
  EXPECT_EQ(devshim::device("cpu:0"), c10::Device("cpu:0"));
  EXPECT_EQ(devshim::device(c10::kMeta), c10::Device(c10::kMeta));
  EXPECT_THROW(devshim::device("cuda:x"), std::invalid_argument);
}

TEST_F(Helpers, TensorsAreCreatedAndMovedWhereThePolicySays) {
  const at::Tensor a = at::zeros({2, 3}, devshim::options(c10::kCUDA));
  EXPECT_TRUE(a.device().is_cpu());
  const at::Tensor b = devshim::to(at::arange(6), c10::kCUDA);
  EXPECT_TRUE(b.device().is_cpu());
  const at::Tensor c = devshim::to(b, "cuda:0");
  EXPECT_TRUE(c.is_same(b));  // already there: the tensor itself
  EXPECT_EQ(devshim::options().device(), c10::Device(c10::kCPU));
  EXPECT_FALSE(
      devshim::options().has_device());  // no device given on a CPU machine: torch's default
  const auto o = devshim::options("cuda").dtype(at::kDouble);
  EXPECT_EQ(at::zeros({1}, o).scalar_type(), at::kDouble);
}

TEST_F(Helpers, EveryRewriteIsRecordedUnderItsCallSite) {
  const int line = __LINE__ + 2;
  for (int i = 0; i < 3; ++i) {
    (void)devshim::to(at::zeros({1}), c10::kCUDA);
  }
  (void)devshim::options("cuda:1");
  (void)devshim::options("cpu");  // stands as it is: not recorded
  const auto rows = global_shim().record();
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].api, "devshim::options");
  EXPECT_EQ(rows[0].requested, "cuda:1");
  EXPECT_EQ(rows[1].api, "devshim::to");
  EXPECT_EQ(rows[1].requested, "cuda");
  EXPECT_EQ(rows[1].used, "cpu");
  EXPECT_EQ(rows[1].count, 3);
  EXPECT_EQ(rows[1].call_site.line, line);
  EXPECT_EQ(rows[1].call_site.function, "TestBody");
  EXPECT_NE(rows[1].call_site.file.find("helpers_test.cpp"), std::string::npos);
}

TEST_F(Helpers, CpuMinusOneTogglesTheOverride) {
  use(active_config(), [] { return Hardware{true, 0}; });
  EXPECT_EQ(devshim::device("cpu"), c10::Device(c10::kMPS));
  EXPECT_EQ(devshim::device("cpu:-1"), c10::Device(c10::kCPU));
  EXPECT_EQ(devshim::device("cpu"), c10::Device(c10::kCPU));
  EXPECT_EQ(devshim::device("cpu:-1"), c10::Device(c10::kCPU));
  EXPECT_EQ(devshim::device("cpu"), c10::Device(c10::kMPS));
}

TEST_F(Helpers, OnAFakeCudaMachineIndicesAreKeptOrFallBackToZero) {
  ShimConfig c = active_config();
  c.allow_redirects = true;
  use(c, [] { return Hardware{false, 2}; });
  EXPECT_EQ(devshim::device("cuda:1"), c10::Device(c10::kCUDA, 1));
  EXPECT_EQ(devshim::device("cuda:7"), c10::Device(c10::kCUDA, 0));
  EXPECT_EQ(devshim::device(c10::Device(c10::kCUDA, 3)), c10::Device(c10::kCUDA, 0));
  EXPECT_EQ(devshim::device("mps"), c10::Device(c10::kCUDA));
  EXPECT_EQ(devshim::options().device(), c10::Device(c10::kCUDA));
  // Without TORCH_ALLOW_REDIRECTS a CUDA machine runs CUDA code as written.
  use(active_config(), [] { return Hardware{false, 2}; });
  EXPECT_EQ(devshim::device("cuda:7"), c10::Device(c10::kCUDA, 7));
  EXPECT_EQ(devshim::device("cpu"), c10::Device(c10::kCPU));
}

TEST_F(Helpers, InactiveTheRequestIsReturnedUnchanged) {
  use(ShimConfig{}, [] { return Hardware{true, 0}; });
  EXPECT_EQ(devshim::device("cuda:1"), c10::Device(c10::kCUDA, 1));
  EXPECT_EQ(devshim::device(c10::kCUDA), c10::Device(c10::kCUDA));
  EXPECT_FALSE(devshim::options().has_device());
  EXPECT_EQ(devshim::options(c10::kCUDA).device(), c10::Device(c10::kCUDA));
  EXPECT_THROW(devshim::device("cuda:x"), c10::Error);  // LibTorch's own parsing
  // ... and so LibTorch says what a CPU-only build says about CUDA.
  try {
    (void)devshim::to(at::zeros({1}), c10::kCUDA);
    FAIL() << "a CPU-only LibTorch moved a tensor to CUDA";
  } catch (const c10::Error& e) {
    // "PyTorch is not linked with support for cuda devices"
    EXPECT_NE(std::string(e.what_without_backtrace()).find("cuda"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(global_shim().record().empty());
}

TEST(GlobalShim, ReadsTheEnvironmentOnce) {
  // ctest runs every test in its own process; a direct run of the binary shares one shim, so
  // this only checks what holds either way.
  Shim& a = global_shim();
  Shim& b = global_shim();
  EXPECT_EQ(&a, &b);
}

TEST(Probe, DescribesThisCpuMachine) {
  const Probe p = probe();
  // The test links the build's LibTorch: the one loaded is the one of the headers, and the version
  // is read from its torch/version.py ("2.13.0+cpu"), which the ABI version agrees with.
  EXPECT_EQ(p.torch_built_against, TORCH_VERSION);
  EXPECT_EQ(p.torch_version.rfind(TORCH_VERSION, 0), 0U) << p.torch_version;
  EXPECT_EQ(p.torch_abi_version, TORCH_VERSION);
  EXPECT_NE(p.torch_library.find("libtorch_cpu"), std::string::npos) << p.torch_library;
  EXPECT_FALSE(p.cuda_available);
  EXPECT_EQ(p.cuda_device_count, 0);
  EXPECT_TRUE(p.cuda_devices.empty());
  EXPECT_FALSE(p.mps_available);
  EXPECT_GE(p.cpu_threads, 1U);
  EXPECT_GE(p.intra_op_threads, 1);
  ASSERT_EQ(p.devices.size(), 1U);
  EXPECT_EQ(p.devices[0].device, "cpu");
  EXPECT_TRUE(p.devices[0].float32);
  EXPECT_EQ(p.devices[0].recommended_dtype, "float32");
}

TEST(Probe, JsonHasTheDocumentedShape) {
  Probe p;
  p.torch_version = "2.14.1+cu130";
  p.torch_abi_version = "2.14.1";
  p.torch_library = "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so";
  p.torch_built_against = "2.13.0";
  p.cuda_available = true;
  p.cuda_device_count = 1;
  p.cuda_devices = {{0, "NVIDIA A100", 42, std::pair{8, 0}}};
  p.cpu_threads = 2;
  p.intra_op_threads = 2;
  p.devices = {{"cpu", true, true, true, "float32"}, {"cuda:0", true, true, true, "bfloat16"}};
  p.policy = {true, "default", "cuda", "passthrough", "cuda", ""};
  const auto doc = nlohmann::json::parse(to_json(p));
  EXPECT_EQ(doc, nlohmann::json::parse(R"({"probe": "devshim-probe/1",
    "torch_version": "2.14.1+cu130", "torch_abi_version": "2.14.1",
    "torch_library": "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so",
    "torch_built_against": "2.13.0",
    "cuda": {"available": true, "device_count": 1,
             "devices": [{"index": 0, "name": "NVIDIA A100", "total_memory": 42, "capability": [8, 0]}]},
    "mps": {"available": false}, "cpu": {"threads": 2, "intra_op_threads": 2},
    "devices": [{"device": "cpu", "matmul": {"float32": true, "float16": true, "bfloat16": true},
                 "recommended_dtype": "float32"},
                {"device": "cuda:0", "matmul": {"float32": true, "float16": true, "bfloat16": true},
                 "recommended_dtype": "bfloat16"}],
    "policy": {"activated": true, "policy": "default", "accelerator": "cuda", "mode": "passthrough",
               "cuda_redirects_to": "cuda"}})"));
  EXPECT_EQ(to_json(p, -1).find('\n'), to_json(p, -1).size() - 1);  // one line
  EXPECT_NE(to_text(p).find("cuda:0    NVIDIA A100"), std::string::npos) << to_text(p);
  EXPECT_NE(to_text(p).find("torch       2.14.1+cu130 (loaded from /venv/"), std::string::npos)
      << to_text(p);
  p.torch_version.clear();
  p.torch_abi_version.clear();
  EXPECT_TRUE(nlohmann::json::parse(to_json(p))["torch_version"].is_null());
}

TEST(Probe, ReadsTheVersionOfTorchsVersionFileOrALibTorchArchivesBuildVersion) {
  EXPECT_EQ(version_in_file_text("from typing import Optional\n\n__version__ = '2.14.1+cu130'\n"
                                 "debug = False\n"),
            "2.14.1+cu130");
  EXPECT_EQ(version_in_file_text("2.15.0+cpu\n"), "2.15.0+cpu");
  EXPECT_EQ(version_in_file_text(""), "");
  EXPECT_EQ(version_in_file_text("not a version\n"), "");
  EXPECT_EQ(version_in_file_text("__version__ = 'unknown'"), "");
}

// devshim-probe, as the runner runs it.
TEST(ProbeExecutable, PrintsJsonOrText) {
  auto json_run = testing::run({DEVSHIM_PROBE_PATH}, {{"ACTIVATE_TORCH_DEVICE", "1"}});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.output;
  const auto doc = nlohmann::json::parse(json_run.output);
  EXPECT_EQ(doc["probe"], "devshim-probe/1");
  EXPECT_EQ(doc["policy"]["activated"], true);
  EXPECT_EQ(doc["policy"]["mode"], "redirect");
  EXPECT_EQ(doc["policy"]["cuda_redirects_to"], "cpu");
  EXPECT_EQ(doc["devices"][0]["device"], "cpu");

  auto off = testing::run({DEVSHIM_PROBE_PATH, "--json"}, {{"ACTIVATE_TORCH_DEVICE", ""}});
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_EQ(nlohmann::json::parse(off.output)["policy"]["cuda_redirects_to"], "cuda");

  auto bad = testing::run({DEVSHIM_PROBE_PATH},
                          {{"ACTIVATE_TORCH_DEVICE", "1"}, {"TORCHDEVICE_POLICY", "sometimes"}});
  ASSERT_EQ(bad.exit_code, 0) << bad.output;
  const auto bad_doc = nlohmann::json::parse(bad.output);
  EXPECT_EQ(bad_doc["policy"]["policy"], nullptr);
  EXPECT_NE(bad_doc["policy"]["error"].get<std::string>().find("TORCHDEVICE_POLICY"),
            std::string::npos);

  auto text = testing::run({DEVSHIM_PROBE_PATH, "--text"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("device    float32  float16  bfloat16  recommended"),
            std::string::npos)
      << text.output;

  EXPECT_EQ(testing::run({DEVSHIM_PROBE_PATH, "--yaml"}).exit_code, 2);
}

// The record written at exit, by a real process (shim_record_child) run twice and then twice at
// once: the file holds the sum.
TEST(RecordAtExit, ChildProcessesMergeTheirRecords) {
  TempDir dir;
  const std::string path = (dir / "record.json").string();
  const std::map<std::string, std::string> env = {{"ACTIVATE_TORCH_DEVICE", "1"},
                                                  {"TORCHDEVICE_RECORD", path},
                                                  {"TORCHDEVICE_LOG_LEVEL", "INFO"}};
  auto first = testing::run({RECORD_CHILD_PATH}, env);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // INFO: one line per new row, not per call.
  EXPECT_NE(first.output.find("devshim INFO: devshim::device: cuda -> cpu at "), std::string::npos)
      << first.output;
  std::size_t info_lines = 0;
  for (auto at = first.output.find("devshim INFO:"); at != std::string::npos;
       at = first.output.find("devshim INFO:", at + 1)) {
    ++info_lines;
  }
  EXPECT_EQ(info_lines, 2U) << first.output;
  auto doc = nlohmann::json::parse(read_file(path));
  EXPECT_EQ(doc["shim"], "cpp");
  EXPECT_EQ(doc["hardware"]["cuda_device_count"], 0);
  ASSERT_EQ(doc["redirections"].size(), 2U) << doc.dump(1);
  EXPECT_EQ(doc["redirections"][0]["api"], "devshim::device");
  EXPECT_EQ(doc["redirections"][0]["count"], 5);
  EXPECT_EQ(doc["redirections"][0]["call_site"]["function"], "main");
  EXPECT_NE(doc["redirections"][0]["call_site"]["file"].get<std::string>().find("record_child.cpp"),
            std::string::npos);
  EXPECT_EQ(doc["redirections"][1]["api"], "devshim::options");
  EXPECT_EQ(doc["redirections"][1]["requested"], "cuda:1");

  auto a = testing::spawn({RECORD_CHILD_PATH}, env, dir / "a.log");
  auto b = testing::spawn({RECORD_CHILD_PATH}, env, dir / "b.log");
  ASSERT_TRUE(testing::wait_for(a, std::chrono::seconds(60)));
  ASSERT_TRUE(testing::wait_for(b, std::chrono::seconds(60)));
  doc = nlohmann::json::parse(read_file(path));
  EXPECT_EQ(doc["redirections"][0]["count"], 15);
  EXPECT_EQ(doc["redirections"][1]["count"], 9);

  // Inactive: no record at all.
  TempDir other;
  auto off = testing::run(
      {RECORD_CHILD_PATH},
      {{"ACTIVATE_TORCH_DEVICE", ""}, {"TORCHDEVICE_RECORD", (other / "r.json").string()}});
  EXPECT_NE(off.exit_code, 0);  // LibTorch: no CUDA
  EXPECT_FALSE(std::filesystem::exists(other / "r.json"));
}

TEST(RecordAtExit, AnUnknownPolicyIsAClearError) {
  auto run = testing::run({RECORD_CHILD_PATH},
                          {{"ACTIVATE_TORCH_DEVICE", "1"}, {"TORCHDEVICE_POLICY", "sometimes"}});
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_NE(run.output.find("TORCHDEVICE_POLICY='sometimes' is not a devshim policy"),
            std::string::npos)
      << run.output;
}

}  // namespace
}  // namespace devshim
