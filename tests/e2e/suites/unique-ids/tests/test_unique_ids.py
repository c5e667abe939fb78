"""Without the shim each test has one CPU case. With it, torch.device("cuda") is built as the CPU's
device (the default TORCHDEVICE_DEVICE_OBJECTS=redirect) and prints as "cpu" too, so pytest makes
the colliding ids unique by their occurrence: [cpu] -> [cpu0], [cpu1]; [cpu-1] of stacked
parametrizes -> [cpu0-1], [cpu1-1]; an id ending in a digit, [cpu1] -> [cpu1_0], [cpu1_1]. Ids
that name an object's address differ in every process."""

import os

import pytest
import torch

DEVICES = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
SHIM = os.environ.get("ACTIVATE_TORCH_DEVICE") == "1"


@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_ones(device):
    assert torch.ones(2, device=device).sum().item() == 2


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_sum(device, n):
    assert torch.full((n,), 1.0, device=device).sum().item() == n


@pytest.mark.parametrize("device", DEVICES, ids=lambda d: f"{d.type}1")
def test_tagged(device):
    assert torch.zeros(1, device=device).item() == 0


# Passes without the shim, fails in both of its cases with it: a regression the counts prove.
@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_without_the_shim(device):
    assert not SHIM


# Ids that print a function's repr name its address, another in every process (BackPACK's ids of
# its settings): compared, not lost.
@pytest.mark.parametrize("fn", [lambda x: x + 1], ids=str)
def test_named_by_address(fn):
    assert fn(1) == 2


# Both: [<function <lambda> at 0x...>-cpu] becomes [<function <lambda> at 0x...>-cpu0] and -cpu1.
@pytest.mark.parametrize("device", DEVICES, ids=str)
@pytest.mark.parametrize("fn", [lambda x: 2 * x], ids=str)
def test_address_and_device(fn, device):
    assert fn(torch.ones(1, device=device)).item() == 2
