"""The signals suite's preload: as slow to import as E2E_PRELOAD_S says (torch takes seconds)."""

import os
import signal
import time

time.sleep(float(os.environ.get("E2E_PRELOAD_S", "0")))


def sleep_as_told(name):
    """Writes this process's pid under E2E_PID_DIR, then sleeps E2E_SLEEP_S seconds (ignoring
    SIGTERM with E2E_IGNORE_SIGTERM)."""
    if os.environ.get("E2E_IGNORE_SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pid_dir = os.environ.get("E2E_PID_DIR")
    if pid_dir:
        with open(os.path.join(pid_dir, f"{name}.pid"), "w") as f:
            f.write(str(os.getpid()))
    time.sleep(float(os.environ.get("E2E_SLEEP_S", "0")))
