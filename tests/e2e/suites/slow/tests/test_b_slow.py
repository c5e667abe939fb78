import os
import subprocess
import sys
import time
import unittest


class Slow(unittest.TestCase):
    def test_slow(self):
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pid_dir = os.environ.get("E2E_PID_DIR")
        if pid_dir:
            with open(os.path.join(pid_dir, "slow_b.pid"), "w") as f:
                f.write(str(p.pid))
        time.sleep(600)
