"""Failures that no torch frame explains. Without the shim both fail too (no CUDA here), so a
differential run classifies them broken_both, which the gap log attributes like regressions: the
device-identity assertion to the semantic gap "tensor.device identity"; the other points
nowhere into torch or the shim and is an `unattributed` entry named by its message."""
import torch


def test_device_identity():
    x = torch.ones(1, device="cuda")
    assert x.device == torch.device("cuda", 0)


def test_plain_assertion():
    x = torch.ones(1, device="cuda")
    assert x.sum().item() == 2
