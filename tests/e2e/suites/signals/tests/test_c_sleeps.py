import unittest

import slow_preload


class Sleeps(unittest.TestCase):
    def test_sleeps(self):
        slow_preload.sleep_as_told("c")
