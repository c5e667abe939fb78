"""Cases numbered by parameterized.expand, one per device found: under the masquerade each list
gains a cuda case, and every case after it a new number."""

import unittest

import torch
from parameterized import parameterized

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


class TestNoGpu(unittest.TestCase):
    # test_sees_0..1 pass without the shim. With it, test_sees_0..3 all fail (the masquerade says
    # a GPU is there): 4 failures where 2 cases were added, so at least 2 of the baseline's
    # passing cases fail now, though no one of them can be named.
    @parameterized.expand([(n, device) for n in (1, 2) for device in DEVICES])
    def test_sees(self, n, device):
        self.assertFalse(torch.cuda.is_available())


class TestPlace(unittest.TestCase):
    # test_place_0..1 pass without the shim; with it, the 2 added cuda cases fail (their device
    # type is the device used): as many failures as cases added, none must be a regression.
    @parameterized.expand([(n, device) for n in (1, 2) for device in DEVICES])
    def test_place(self, n, device):
        x = torch.full((n,), 1.0, device=device)
        self.assertEqual(x.device.type, device)
