import os
import signal
import unittest


class Crashes(unittest.TestCase):
    def test_segfault(self):
        os.kill(os.getpid(), signal.SIGSEGV)
