"""Tests that pass without the shim. Some gate their CUDA branch inside the body, so that without
CUDA they pass without running it; under the shim the branch runs for the first time."""

import unittest

import torch


def test_zeros_is_a_builtin():
    # Shared code, the same with and without the shim, which wraps torch.zeros in Python: the
    # shim broke it (a regression).
    assert type(torch.zeros).__name__ == "builtin_function_or_method"


def test_branch_asserts_a_cuda_device():
    x = torch.ones(2)
    if torch.cuda.is_available():
        x = x.cuda()
        assert x.is_cuda  # no redirection makes a tensor on the CPU a CUDA one


def test_branch_raises_its_own_error():
    scale = torch.distributions.HalfCauchy(torch.tensor(1.0))
    if torch.cuda.is_available():
        scale = scale.cuda()  # a distribution has no .cuda(), on a real GPU too
    assert scale.scale.item() == 1.0


def test_branch_passes():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert torch.arange(3, device=device).sum().item() == 3


def test_optimizer_step_only():
    # Adam.step() asks torch.accelerator for the current stream: torch's own call, no CUDA path.
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.ones(2)).sum().backward()
    optimizer.step()


def test_only_seeds():
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(0)
    assert torch.ones(1).item() == 1


class TestKernelStyle(unittest.TestCase):
    def setUp(self):
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(0)

    def test_moves_to_cuda(self):
        if torch.cuda.is_available():
            module = torch.nn.Linear(2, 2).to(device="cuda")
            self.assertNotEqual(module.weight.device, torch.device("cpu"))
