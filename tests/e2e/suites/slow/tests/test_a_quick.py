import unittest


class Quick(unittest.TestCase):
    def test_quick(self):
        pass
