"""Passes, but leaves a background process behind."""
import os
import subprocess
import sys
import unittest


class LeavesProcessBehind(unittest.TestCase):
    def test_passes(self):
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pid_dir = os.environ.get("E2E_PID_DIR")
        if pid_dir:
            with open(os.path.join(pid_dir, "leftover.pid"), "w") as f:
                f.write(str(p.pid))
