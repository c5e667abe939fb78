"""Shared fixtures of the shim's tests: the shim folder on sys.path, and an activated shim.

The shim folder is DEVSHIM_SHIM_DIR (set by ctest) or shim/python of this checkout. ``shim``
activates devshim for one test with a clean environment (no TORCHDEVICE_* variables unless the
test sets them with monkeypatch first) and a fresh record, and checks that deactivation put every
torch attribute back.
"""
import contextlib
import os
import pathlib
import subprocess
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
SHIM_DIR = pathlib.Path(os.environ.get("DEVSHIM_SHIM_DIR", REPO_ROOT / "shim" / "python")).resolve()
if str(SHIM_DIR) not in sys.path:
    sys.path.insert(0, str(SHIM_DIR))

SHIM_ENV = ("TORCH_ALLOW_REDIRECTS", "TORCHDEVICE_LOG_LEVEL", "TORCHDEVICE_POLICY",
            "TORCHDEVICE_RECORD", "TORCHDEVICE_DEVICE_OBJECTS", "TORCHDEVICE_CPU_MEMORY")


def cpu_only(torch):
    return not torch.cuda.is_available() and not torch.backends.mps.is_available()


def recorded_apis():
    """The APIs this process's redirection record holds so far (devshim.record)."""
    from devshim import record

    return {r["api"] for r in record.rows()}


@contextlib.contextmanager
def free_memory_held_still():
    """The device used's free memory held at one value while active: other processes change it
    between two reads, so two queries of it agree only so."""
    from unittest import mock

    from devshim import cuda_masquerade

    backend = cuda_masquerade._backend
    with mock.patch.object(backend, "free_memory", return_value=backend.free_memory()):
        yield


def child_env(extra_path=None, activate=False):
    """For a child process: this environment without the shim's variables, the shim folder (and
    extra_path) on PYTHONPATH; with activate, the shim on."""
    env = {k: v for k, v in os.environ.items()
           if k != "ACTIVATE_TORCH_DEVICE" and not k.startswith("TORCHDEVICE_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SHIM_DIR), extra_path) if p)
    if activate:
        env["ACTIVATE_TORCH_DEVICE"] = "1"
    return env


def run_shimmed(code, timeout=300):
    """``python -c code`` in a child process with the shim on (child_env(activate=True)): its
    CompletedProcess, output captured as text."""
    return subprocess.run([sys.executable, "-c", code], env=child_env(activate=True),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def clean_env(monkeypatch):
    for name in SHIM_ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def active_shim():
    """devshim activated with the environment as it is now: yields it, then deactivates it and
    checks that every patch was undone. For fixtures (`yield from active_shim()`)."""
    import torch  # noqa: F401

    import devshim
    from devshim import patching, record

    devshim.deactivate()
    record.reset()
    devshim.activate()
    installed = patching.installed()
    yield devshim
    devshim.deactivate()
    for owner, name, original, _ in installed:
        if original is patching.MISSING:  # added by the shim: gone again
            assert not hasattr(owner, name), f"{owner}.{name} not removed"
        else:
            assert getattr(owner, name) is original, f"{owner}.{name} not restored"
    record.reset()


@pytest.fixture
def shim(clean_env):
    """devshim active for the test; deactivated (and checked) afterwards."""
    yield from active_shim()


@pytest.fixture
def shim_keeping_objects(clean_env):
    """The shim active with TORCHDEVICE_DEVICE_OBJECTS=keep; deactivated and checked after."""
    clean_env.setenv("TORCHDEVICE_DEVICE_OBJECTS", "keep")
    yield from active_shim()
