"""Tests that take a CUDA path under the shim, and tests that take none.

Without the shim the device list is [cpu]; with it torch.cuda.is_available() is True and the list
gains torch.device("cuda"), built as the CPU's device (TORCHDEVICE_DEVICE_OBJECTS=redirect), so
pytest names the two cases [cpu0] and [cpu1]: [cpu0] is the baseline's [cpu], [cpu1] is new under
the shim."""

import pytest
import torch

DEVICES = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
CUDA = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_ones(device):
    assert torch.ones(2, device=device).sum().item() == 2


def test_picks_cuda_when_available():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert torch.zeros(2, device=device).sum().item() == 0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_needs_cuda():
    assert torch.arange(3).cuda().sum().item() == 3


def test_cpu_only():
    assert (torch.ones(1) + 1).item() == 2


def test_fails_both_ways():
    torch.zeros(1, device=CUDA)
    raise AssertionError("broken on every device")
