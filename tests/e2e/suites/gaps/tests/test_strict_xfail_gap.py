"""Tests marked to fail, strictly, where CUDA is (torch's own shape for a known bug of a CUDA
kernel) or when CPU and CUDA tensors meet (sbi's): without the shim the first passes and the
second skips; under the shim both pass, which a strict xfail turns into a failure. The gap log
names them by what the mark expected, not as an unattributed failure."""
import pytest
import torch

CUDA = torch.cuda.is_available()


@pytest.mark.xfail(CUDA, reason="a bug of the CUDA kernel", strict=True)
def test_sum_of_halves():
    assert torch.ones(4).sum().item() == 4


@pytest.mark.parametrize("first, second", [
    pytest.param("cpu", "cuda", marks=[
        pytest.mark.skipif(not CUDA, reason="needs CUDA"),
        pytest.mark.xfail(reason="tensors on two devices", strict=True)]),
])
def test_add_across_devices(first, second):
    assert (torch.ones(2, device=first) + torch.ones(2, device=second)).sum().item() == 4
