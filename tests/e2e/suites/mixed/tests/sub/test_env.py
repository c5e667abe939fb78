"""Records the environment the runner gave this process."""
import json
import os
import sys
import unittest


class Environment(unittest.TestCase):
    def test_record_environment(self):
        out = os.environ.get("E2E_PID_DIR")
        mode = "shim" if os.environ.get("ACTIVATE_TORCH_DEVICE") == "1" else "baseline"
        record = {
            "ACTIVATE_TORCH_DEVICE": os.environ.get("ACTIVATE_TORCH_DEVICE"),
            "PYTORCH_ENABLE_MPS_FALLBACK": os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK"),
            "PYTHONPATH": os.environ.get("PYTHONPATH"),
            "E2E_SUITE_VAR": os.environ.get("E2E_SUITE_VAR"),
            "cwd": os.getcwd(),
            "devshim_imported": "devshim" in sys.modules,
            "stdin_isatty": sys.stdin.isatty(),
            "stdin_read": sys.stdin.read(),
        }
        if out:
            with open(os.path.join(out, "env-%s.json" % mode), "w") as f:
                json.dump(record, f)
