"""Cases numbered by parameterized.expand, one list per device found (as captum's tests do)."""

import unittest

import torch
from parameterized import parameterized

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
CASES = [(f"{reduction}_{device}", reduction, device)
         for reduction in ("none", "sum") for device in DEVICES]


class TestScale(unittest.TestCase):
    @parameterized.expand(CASES)
    def test_scale(self, _name, reduction, device):
        x = torch.ones(3, device=device) * 2
        out = x if reduction == "none" else x.sum()
        self.assertEqual(out.sum().item(), 6.0)


class TestDevice(unittest.TestCase):
    # parameterized's default names for cases whose first argument is not a string: test_place_0,
    # test_place_1 without CUDA; test_place_0 ... test_place_3 with it, the same names now other
    # cases. Not comparable one by one.
    @parameterized.expand([(n, device) for n in (1, 2) for device in DEVICES])
    def test_place(self, n, device):
        x = torch.full((n,), 1.0, device=device)
        self.assertEqual(x.device.type, device)  # fails for "cuda" under the shim: a type check
