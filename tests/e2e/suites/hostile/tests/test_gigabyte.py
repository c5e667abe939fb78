"""Writes 1 GB of output (in 1 MiB lines), then passes."""
import os
import sys
import unittest


class Gigabyte(unittest.TestCase):
    def test_writes_a_gigabyte(self):
        line = b"x" * ((1 << 20) - 1) + b"\n"
        total = int(os.environ.get("E2E_GIGABYTE_BYTES", str(10**9)))
        out = sys.stdout.buffer
        for _ in range(-(-total // len(line))):  # at least total bytes
            out.write(line)
        out.flush()
