"""torch.cuda queries that CUDA-first code asks before it does anything."""
import torch


def test_cuda_is_available():
    assert torch.cuda.is_available()


def test_device_count_agrees_with_availability():
    assert (torch.cuda.device_count() > 0) == torch.cuda.is_available()


def test_synchronize_returns():
    x = torch.ones(3, device="cuda")
    torch.cuda.synchronize()
    assert x.sum().item() == 3
