// Modules and training the CUDA way: a module moved to cuda, a forward pass, an optimizer step
// whose loss goes down and matches the same computation on the CPU. Every device goes through
// devshim, so under the shim it lands on the hardware present.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "devshim/devshim.h"

namespace {

struct Net : torch::nn::Module {
  Net() {
    fc1 = register_module("fc1", torch::nn::Linear(4, 8));
    fc2 = register_module("fc2", torch::nn::Linear(8, 1));
  }
  torch::Tensor forward(torch::Tensor x) { return fc2->forward(torch::relu(fc1->forward(x))); }
  torch::nn::Linear fc1{nullptr};
  torch::nn::Linear fc2{nullptr};
};

/// y = x . w + 0.5, for a fixed w: something a small net can learn.
std::pair<torch::Tensor, torch::Tensor> data() {
  torch::manual_seed(0);
  auto x = torch::randn({64, 4});
  auto w = torch::tensor({1.0F, -2.0F, 0.5F, 3.0F}).reshape({4, 1});
  return {x, torch::matmul(x, w) + 0.5};
}

/// The losses of `steps` SGD steps on `device` (plain LibTorch when device is the CPU).
std::vector<float> train(const torch::Device& device, int steps) {
  torch::manual_seed(7);
  auto net = std::make_shared<Net>();
  net->to(device);
  auto [x, y] = data();
  x = x.to(device);
  y = y.to(device);
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.05));
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    opt.step();
    losses.push_back(loss.item<float>());
  }
  return losses;
}

TEST(Training, ModuleToCudaMovesEveryParameter) {
  torch::nn::Linear linear(3, 2);
  const torch::Device used = devshim::to(linear, torch::kCUDA);
  EXPECT_EQ(used, devshim::device(torch::kCUDA));
  for (const auto& p : linear->parameters()) EXPECT_EQ(p.device(), used);
}

TEST(Training, ForwardOnCudaMatchesCpu) {
  torch::manual_seed(3);
  auto net = std::make_shared<Net>();
  auto x = torch::randn({5, 4});
  auto expected = net->forward(x);
  devshim::to(net, torch::kCUDA);
  auto got = net->forward(devshim::to(x, torch::kCUDA));
  EXPECT_TRUE(torch::allclose(got.cpu(), expected, 1e-4, 1e-5));
}

TEST(Training, LossDecreasesOnCuda) {
  const auto losses = train(devshim::device(torch::kCUDA), 30);
  EXPECT_LT(losses.back(), losses.front() * 0.5F)
      << "first " << losses.front() << ", last " << losses.back();
}

TEST(Training, CudaTrainingMatchesTheCpuComputation) {
  const auto on_cuda = train(devshim::device("cuda:0"), 10);
  const auto on_cpu = train(torch::kCPU, 10);
  ASSERT_EQ(on_cuda.size(), on_cpu.size());
  for (std::size_t i = 0; i < on_cuda.size(); ++i) {
    EXPECT_NEAR(on_cuda[i], on_cpu[i], 1e-3F * std::max(1.0F, on_cpu[i])) << "step " << i;
  }
}

TEST(Training, NoGradInferenceOnCuda) {
  torch::nn::Sequential model(torch::nn::Linear(4, 4), torch::nn::ReLU(), torch::nn::Linear(4, 2));
  devshim::to(model, "cuda");
  torch::NoGradGuard no_grad;
  auto out = model->forward(torch::randn({3, 4}, devshim::options(torch::kCUDA)));
  EXPECT_FALSE(out.requires_grad());
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{3, 2}));
}

TEST(Training, StateDictCopiedFromACpuModelToACudaModel) {
  torch::nn::Linear source(4, 2);
  torch::nn::Linear target(4, 2);
  devshim::to(target, torch::kCUDA);
  {
    torch::NoGradGuard no_grad;
    auto src = source->named_parameters();
    for (auto& p : target->named_parameters()) p.value().copy_(src[p.key()]);
  }
  auto x = torch::randn({2, 4});
  EXPECT_TRUE(
      torch::allclose(target->forward(devshim::to(x, torch::kCUDA)).cpu(), source->forward(x)));
}

}  // namespace
