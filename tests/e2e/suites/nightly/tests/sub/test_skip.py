import unittest


class Skips(unittest.TestCase):
    @unittest.skip("not on this machine")
    def test_skipped(self):
        pass

    def test_runs(self):
        pass
