"""The one wheel on each CPython 3.10-3.13 this machine has, without torch: pip accepts it (its
py3-none tag), the runner runs and names its version, `import devshim` gives the same version, and
`runner devices` says why the probe cannot start (no LibTorch beside it) and what to install,
never a version. Seconds per Python: a fresh venv without pip, the wheel installed into it with
--no-deps by this Python's pip.

The whole check per Python (torch, the bundled suite's differential) is test_wheel.py: ctest runs
it for this machine's development Python as wheel_install (label install, in ./test.sh) and for the
others as wheel_install_3.10 ... (label wheel-matrix, left out of ./test.sh: PyPI's CUDA build of
torch for each, about 4.7 GB; docs/install.md#checked-here). ctest runs this one as
wheel_each_python (label install) after wheel_build, with DEVSHIM_ROOT and DEVSHIM_WHEEL_DIR as for
test_wheel.py and DEVSHIM_WHEEL_PYTHONS, the versions ("3.10 3.12 3.13").
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_wheel import interpreter, run, user_environment, wheel  # noqa: F401  (wheel: fixture)

PYTHONS = os.environ.get("DEVSHIM_WHEEL_PYTHONS", "3.10 3.11 3.12 3.13").split()
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the wheel is built for Linux")


@pytest.mark.parametrize("version", PYTHONS)
def test_the_wheel_installs_and_runs_without_torch(version, wheel, tmp_path):  # noqa: F811
    python = interpreter(version)
    if python is None:
        pytest.skip(f"no CPython {version} on this machine")
    venv = tmp_path / "venv"
    # Without the venv's own pip (ensurepip took half of the check's time): this interpreter's
    # pip installs into it, run by the venv's Python (--python), so it is that Python's tags
    # that accept the wheel or not.
    run([python, "-m", "venv", "--without-pip", str(venv)], timeout=300)
    run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
         "--disable-pip-version-check", "--no-deps", "--no-index", str(wheel)], timeout=300)
    env = user_environment(venv)
    version_text = run([str(venv / "bin" / "runner"), "--version"], env=env, cwd=tmp_path).stdout
    imported = run([str(venv / "bin" / "python"), "-c",
                    "import devshim; print(devshim.__version__)"], env=env, cwd=tmp_path)
    assert version_text.splitlines()[0] == f"runner {imported.stdout.strip()}", version_text

    devices = run([str(venv / "bin" / "runner"), "devices", "--json"], env=env, cwd=tmp_path)
    report = json.loads(devices.stdout)
    probe = report["device_probe"]
    # The installed probe was found and could not load a LibTorch: none is there.
    assert Path(probe["probe_path"]) == venv / "bin" / "devshim-probe", probe
    assert "libtorch" in probe["probe_error"], probe
    assert "torch_version" not in probe and "torch_support" not in probe, probe
    assert report["python"]["torch"] is None, report["python"]
    assert report["python"]["python"].startswith(version + "."), report["python"]
    advice = " ".join(report["recommendations"])
    assert "install a torch of 2." in advice and "Build devshim-probe" not in advice, advice
    text = subprocess.run([str(venv / "bin" / "runner"), "devices"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300).stdout
    assert "LibTorch probe: unavailable:" in text, text
