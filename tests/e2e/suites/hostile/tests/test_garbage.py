"""Prints invalid UTF-8 and NULs, on stdout, stderr and in a failure message."""
import sys
import unittest

GARBAGE = b"caf\xe9 \xff\xfe\x00 nul \xc3\x28 \xed\xa0\x80 surrogate \xf4\x90\x80\x80 <b>&amp;</b>"


class Garbage(unittest.TestCase):
    def test_prints_garbage_and_passes(self):
        sys.stdout.buffer.write(GARBAGE + b"\n")
        sys.stdout.flush()
        sys.stderr.buffer.write(GARBAGE + b"\n")
        sys.stderr.flush()

    def test_fails_with_garbage(self):
        self.fail(GARBAGE.decode("utf-8", "surrogateescape") + "\x00 end")
