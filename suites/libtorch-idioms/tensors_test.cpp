// Tensors the CUDA way: created on cuda, moved to cuda and back, indexed, seeded. Every device
// goes through devshim, so under the shim (ACTIVATE_TORCH_DEVICE=1) it lands on the hardware
// present; without it LibTorch is asked for CUDA as written.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "devshim/devshim.h"

namespace {

const torch::Device kCuda = torch::kCUDA;

TEST(Tensors, ZerosOnesAndFullOnCuda) {
  auto z = torch::zeros({2, 3}, devshim::options(torch::kCUDA));
  auto o = torch::ones({2, 3}, devshim::options(torch::kCUDA));
  auto f = torch::full({2, 3}, 7.0, devshim::options(torch::kCUDA));
  EXPECT_EQ(z.device(), devshim::device(kCuda));
  EXPECT_EQ((z + o + f).sum().item<double>(), 48.0);
}

TEST(Tensors, MoveToCudaComputeAndBackToCpu) {
  auto cpu = torch::arange(12, torch::kFloat).reshape({3, 4});
  auto gpu = devshim::to(cpu, torch::kCUDA);
  auto result = (gpu * 2 + 1).to(torch::kCPU);
  EXPECT_TRUE(result.device().is_cpu());
  EXPECT_TRUE(torch::equal(result, cpu * 2 + 1));
}

TEST(Tensors, MatmulOnCudaMatchesCpu) {
  torch::manual_seed(1);
  auto a = torch::randn({16, 8});
  auto b = torch::randn({8, 4});
  auto on_gpu = torch::matmul(devshim::to(a, "cuda"), devshim::to(b, "cuda"));
  EXPECT_TRUE(torch::allclose(on_gpu.cpu(), torch::matmul(a, b), 1e-4, 1e-5));
}

TEST(Tensors, DtypeSurvivesTheDevice) {
  auto options = devshim::options(torch::kCUDA).dtype(torch::kFloat64);
  auto t = torch::linspace(0, 1, 5, options);
  EXPECT_EQ(t.scalar_type(), torch::kFloat64);
  EXPECT_EQ(t.device(), devshim::device("cuda"));
  auto half = devshim::to(torch::ones({4}), torch::kCUDA).to(torch::kFloat16);
  EXPECT_EQ(half.scalar_type(), torch::kFloat16);
}

TEST(Tensors, CudaIndexZeroAndBeyondTheLastDevice) {
  // cuda:0 always exists on a CUDA machine; under the shim a missing index falls back to cuda:0
  // (or to the accelerator present), so code written for an 8-GPU box still runs.
  auto a = torch::ones({2}, devshim::options("cuda:0"));
  auto b = torch::ones({2}, devshim::options(torch::Device(torch::kCUDA, 7)));
  EXPECT_EQ(a.device(), b.device());
  EXPECT_TRUE(torch::equal(a + b, torch::full({2}, 2.0, devshim::options("cuda:0"))));
}

TEST(Tensors, DeviceStringsAndDeviceObjectsAgree) {
  EXPECT_EQ(devshim::device("cuda:0"), devshim::device(torch::Device(torch::kCUDA, 0)));
  EXPECT_EQ(devshim::device("cuda"), devshim::device(kCuda));
  auto t = torch::zeros({1}, devshim::options("cuda"));
  EXPECT_EQ(t.device().type(), devshim::device("cuda").type());
}

TEST(Tensors, ManualSeedMakesCudaRandomnessReproducible) {
  torch::manual_seed(42);
  auto first = torch::randn({5}, devshim::options(torch::kCUDA));
  torch::manual_seed(42);
  auto second = torch::randn({5}, devshim::options(torch::kCUDA));
  EXPECT_TRUE(torch::equal(first, second));
  auto third = torch::randn({5}, devshim::options(torch::kCUDA));
  EXPECT_FALSE(torch::equal(first, third));
}

TEST(Tensors, BooleanMaskAndIndexingOnCuda) {
  auto t = devshim::to(torch::arange(10), torch::kCUDA);
  auto even = t.index({t.remainder(2) == 0});
  EXPECT_EQ(even.numel(), 5);
  EXPECT_EQ(even.sum().item<int64_t>(), 20);
  t.index_put_({torch::indexing::Slice(0, 3)}, 0);
  EXPECT_EQ(t.sum().item<int64_t>(), 42);
}

TEST(Tensors, ReductionsAndInPlaceOpsOnCuda) {
  auto t = torch::ones({4, 4}, devshim::options(torch::kCUDA));
  t.mul_(3).add_(1);
  EXPECT_EQ(t.sum().item<float>(), 64.0F);
  EXPECT_EQ(t.max().item<float>(), 4.0F);
  EXPECT_EQ(std::get<1>(t.sum(1).max(0)).item<int64_t>(), 0);
}

}  // namespace
