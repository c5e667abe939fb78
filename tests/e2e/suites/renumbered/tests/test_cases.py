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
