import unittest


class Failing(unittest.TestCase):
    def test_ok(self):
        pass

    def test_wrong(self):
        self.assertLessEqual(0.79, 1e-05)
