"""Starts a daemon the classic way (fork, setsid, fork): it leaves the test's process group."""
import os
import time
import unittest


def daemonize(pid_file):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pid_file, "w") as f:
                f.write(str(os.getpid()))
            time.sleep(600)
        os._exit(0)


class Daemon(unittest.TestCase):
    def test_starts_a_daemon(self):
        pid_file = os.path.join(os.environ.get("E2E_PID_DIR", "."), "daemon.pid")
        daemonize(pid_file)
        for _ in range(200):
            if os.path.exists(pid_file) and open(pid_file).read():
                break
            time.sleep(0.01)
        self.assertTrue(os.path.exists(pid_file))
