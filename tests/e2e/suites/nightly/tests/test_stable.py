import unittest


class Stable(unittest.TestCase):
    def test_one(self):
        pass

    def test_two(self):
        self.assertEqual(1 + 1, 2)
