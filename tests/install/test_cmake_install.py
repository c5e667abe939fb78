"""`cmake --install BUILD --prefix P` gives the wheel's layout, and what it installs runs from P:
the runner finds the shim and the warm-start server beside it, and the probe its LibTorch.

ctest runs it as cmake_install_layout (label install) with DEVSHIM_BUILD (the build folder) and
DEVSHIM_ROOT (the checkout).
"""
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(os.environ.get("DEVSHIM_ROOT", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("DEVSHIM_BUILD", ROOT / "build"))


def test_an_installed_tree_runs_from_its_prefix(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], check=True,
                   capture_output=True, timeout=300)
    for path in ("bin/runner", "bin/devshim-probe", "share/devshim/shim/sitecustomize.py",
                 "share/devshim/shim/devshim/__init__.py",
                 "share/devshim/zygote/devshim_zygote.py"):
        assert (prefix / path).is_file(), path
    assert not list(prefix.rglob("__pycache__")), "the build's bytecode is not installed"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEVSHIM_")}
    devices = subprocess.run([str(prefix / "bin" / "runner"), "devices", "--json"], env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
    report = json.loads(devices.stdout)
    probe = report["device_probe"]
    assert "probe_error" not in probe, probe
    assert Path(probe["probe_path"]) == prefix / "bin" / "devshim-probe"
