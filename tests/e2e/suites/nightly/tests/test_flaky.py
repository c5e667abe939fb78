# test_sometimes fails the first time it runs and passes after, counting its runs in a file of
# E2E_FLAKY_DIR; without that variable it passes.
import os
import unittest


def runs_so_far():
    folder = os.environ.get("E2E_FLAKY_DIR")
    if not folder:
        return None
    path = os.path.join(folder, "test_sometimes.count")
    count = 0
    if os.path.exists(path):
        with open(path) as f:
            count = int(f.read() or "0")
    count += 1
    with open(path, "w") as f:
        f.write(str(count))
    return count


class Flaky(unittest.TestCase):
    def test_sometimes(self):
        count = runs_so_far()
        self.assertNotEqual(count, 1, "fails the first time")

    def test_other(self):
        pass
