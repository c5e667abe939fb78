"""A file whose name holds spaces, quotes and non-ASCII letters."""
import unittest


class OddName(unittest.TestCase):
    def test_passes(self):
        self.assertTrue(True)

    def test_fails(self):
        self.assertEqual("ünïcødé", "unicode")
