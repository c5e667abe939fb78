"""Tensors created on and moved to "cuda", as CUDA-first code writes them."""
import torch


def test_zeros_on_cuda_match_cpu():
    x = torch.zeros(4, 3, device="cuda")
    assert x.sum().item() == 0
    assert x.shape == (4, 3)


def test_move_with_dot_cuda_and_back():
    a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    b = a.cuda() * 2
    assert torch.equal(b.cpu(), a * 2)


def test_matmul_on_cuda_matches_cpu():
    torch.manual_seed(0)
    a = torch.randn(8, 5)
    b = torch.randn(5, 3)
    expected = a @ b
    got = (a.to("cuda") @ b.to("cuda")).cpu()
    assert torch.allclose(got, expected, atol=1e-6)


def test_cpu_math_needs_no_shim():
    assert torch.tensor([1.0, 2.0]).sum().item() == 3.0
