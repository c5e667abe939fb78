// devshim::to for modules: a Module, a ModuleHolder (torch::nn::Linear) and a shared_ptr.
#include <gtest/gtest.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <memory>

#include "devshim/devshim.h"

namespace devshim {
namespace {

class ModuleHelpers : public ::testing::Test {
 protected:
  void SetUp() override {
    ShimConfig c;
    c.activated = true;
    global_shim().reset(c, detect_hardware);
  }
  void TearDown() override { global_shim().reset(ShimConfig{}, detect_hardware); }
};

bool all_parameters_on(const torch::nn::Module& m, c10::Device d) {
  for (const auto& p : m.parameters()) {
    if (p.device() != d) return false;
  }
  return true;
}

TEST_F(ModuleHelpers, HolderModuleAndSharedPtrAllMove) {
  torch::nn::Linear linear(3, 2);
  EXPECT_EQ(devshim::to(linear, c10::kCUDA), c10::Device(c10::kCPU));
  EXPECT_TRUE(all_parameters_on(*linear, c10::Device(c10::kCPU)));

  auto shared = std::make_shared<torch::nn::LinearImpl>(3, 2);
  EXPECT_EQ(devshim::to(shared, "cuda:0"), c10::Device(c10::kCPU));

  torch::nn::Sequential seq(torch::nn::Linear(3, 4), torch::nn::Linear(4, 1));
  torch::nn::Module& plain = *seq;
  EXPECT_EQ(devshim::to(plain, c10::Device(c10::kCUDA, 1)), c10::Device(c10::kCPU));
  EXPECT_TRUE(all_parameters_on(plain, c10::Device(c10::kCPU)));

  const auto rows = global_shim().record();
  ASSERT_EQ(rows.size(), 3U);
  for (const auto& row : rows) EXPECT_EQ(row.api, "devshim::to(Module)");
}

TEST_F(ModuleHelpers, InactiveAModuleGoesWhereItIsToldAndLibTorchRefusesCuda) {
  global_shim().reset(ShimConfig{}, detect_hardware);
  torch::nn::Linear linear(3, 2);
  EXPECT_THROW(devshim::to(linear, c10::kCUDA), c10::Error);
  EXPECT_EQ(devshim::to(linear, c10::kCPU), c10::Device(c10::kCPU));
}

}  // namespace
}  // namespace devshim
