"""Spawns a grandchild that ignores SIGTERM, records its pid, then hangs past the timeout."""
import os
import subprocess
import sys
import time
import unittest

GRANDCHILD = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(600)\n"


class SpawnsStubbornGrandchild(unittest.TestCase):
    def test_spawn_and_hang(self):
        signal_ignoring = subprocess.Popen([sys.executable, "-c", GRANDCHILD])
        pid_dir = os.environ.get("E2E_PID_DIR")
        if pid_dir:
            with open(os.path.join(pid_dir, "grandchild.pid"), "w") as f:
                f.write(str(signal_ignoring.pid))
        time.sleep(600)
