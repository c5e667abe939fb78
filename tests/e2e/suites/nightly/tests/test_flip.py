# Outcomes that depend on the night (E2E_NIGHT: "1", the default, or "2").
import os
import unittest

NIGHT = os.environ.get("E2E_NIGHT", "1")


class Flip(unittest.TestCase):
    def test_breaks(self):
        # passes on night 1, fails on night 2: a new failure
        self.assertEqual(NIGHT, "1")

    def test_heals(self):
        # fails on night 1, passes on night 2: fixed
        self.assertEqual(NIGHT, "2")

    def test_broken(self):
        # fails every night: still failing
        self.assertTrue(False, "always broken")

    def test_fine(self):
        pass
