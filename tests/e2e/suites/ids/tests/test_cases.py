"""unittest names: a test, a failing test, subtests. Tests whose name holds "fails" fail."""
import unittest


class Cases(unittest.TestCase):
    def test_passes(self):
        self.assertTrue(True)

    def test_fails(self):
        self.assertEqual(1, 2)

    def test_subtests_fails(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertEqual(i, 0)
