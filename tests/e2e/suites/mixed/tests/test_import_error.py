import unittest

import module_that_does_not_exist  # noqa: F401


class NeverRuns(unittest.TestCase):
    def test_never(self):
        pass
