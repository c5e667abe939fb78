"""``torch.cuda.tunable`` (TunableOp), while masquerading.

TunableOp picks the fastest of several GEMM implementations of a CUDA or ROCm build. A build
without CUDA has none of its ``torch._C._cuda_tunableop_*`` bindings, so every function of
``torch.cuda.tunable`` failed with ``AttributeError: module 'torch._C' has no attribute ...``
once the masquerade made ``torch.cuda.is_available()`` True.

Here its settings are kept, and nothing is tuned: the device used runs its own kernels, and no
result depends on which GEMM implementation computes it.

- The setters store what they are given; the getters answer it, or torch's default before that:
  the environment variables torch reads (``PYTORCH_TUNABLEOP_ENABLED`` "1", ``_TUNING`` not "0",
  ``_RECORD_UNTUNED`` "1", ``_MAX_TUNING_DURATION_MS`` (30), ``_MAX_TUNING_ITERATIONS`` (100),
  ``_FILENAME`` ("tunableop_results.csv"), ``_ROTATING_BUFFER_SIZE`` in MB (0 here: no GPU cache
  to flush)). ``set_filename(f, insert_device_ordinal=True)`` puts the device's ordinal before
  the extension, as torch does.
- ``get_results()`` and ``get_validators()`` answer ``()``: nothing was tuned; ``read_file()``
  answers False (no results are used, so none were read).
- ``tune_gemm_in_file``/``mgpu_tune_gemm_in_file``, which run GEMMs to time them:
  NotImplementedError (devshim/unsupported.py's message).

Every call is recorded (API ``torch.cuda.tunable.<name>``).
"""

from __future__ import annotations

import os

from devshim import runtime
from devshim.cuda_masquerade import _note, replacing
from devshim.patching import MASQUERADE, RAISES, Patch
from devshim.unsupported import _raising

__all__ = ["plan", "reset"]

_settings: dict = {}


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def reset() -> None:
    """Back to torch's defaults, read from the environment now (each activation)."""
    env = os.environ.get
    _settings.clear()
    _settings.update(
        enabled=env("PYTORCH_TUNABLEOP_ENABLED", "0") == "1",
        tuning=env("PYTORCH_TUNABLEOP_TUNING", "1") != "0",
        record_untuned=env("PYTORCH_TUNABLEOP_RECORD_UNTUNED", "0") == "1",
        duration=_env_int("PYTORCH_TUNABLEOP_MAX_TUNING_DURATION_MS", 30),
        iterations=_env_int("PYTORCH_TUNABLEOP_MAX_TUNING_ITERATIONS", 100),
        filename=env("PYTORCH_TUNABLEOP_FILENAME", "tunableop_results.csv"),
        rotating_buffer_kb=max(_env_int("PYTORCH_TUNABLEOP_ROTATING_BUFFER_SIZE", 0), 0) * 1024,
    )


def enable(val=True):
    _note("torch.cuda.tunable.enable")
    _settings["enabled"] = bool(val)


def is_enabled():
    _note("torch.cuda.tunable.is_enabled")
    return _settings["enabled"]


def tuning_enable(val=True):
    _note("torch.cuda.tunable.tuning_enable")
    _settings["tuning"] = bool(val)


def tuning_is_enabled():
    _note("torch.cuda.tunable.tuning_is_enabled")
    return _settings["tuning"]


def record_untuned_enable(val=True):
    _note("torch.cuda.tunable.record_untuned_enable")
    _settings["record_untuned"] = bool(val)


def record_untuned_is_enabled():
    _note("torch.cuda.tunable.record_untuned_is_enabled")
    return _settings["record_untuned"]


def set_max_tuning_duration(duration):
    _note("torch.cuda.tunable.set_max_tuning_duration")
    _settings["duration"] = int(duration)


def get_max_tuning_duration():
    _note("torch.cuda.tunable.get_max_tuning_duration")
    return _settings["duration"]


def set_max_tuning_iterations(iterations):
    _note("torch.cuda.tunable.set_max_tuning_iterations")
    _settings["iterations"] = int(iterations)


def get_max_tuning_iterations():
    _note("torch.cuda.tunable.get_max_tuning_iterations")
    return _settings["iterations"]


def set_filename(filename, insert_device_ordinal=False):
    _note("torch.cuda.tunable.set_filename")
    if insert_device_ordinal:
        stem, extension = os.path.splitext(filename)
        filename = f"{stem}{runtime.selected_cuda_index()}{extension}"
    _settings["filename"] = filename


def get_filename():
    _note("torch.cuda.tunable.get_filename")
    return _settings["filename"]


def get_results():
    _note("torch.cuda.tunable.get_results")
    return ()


def get_validators():
    _note("torch.cuda.tunable.get_validators")
    return ()


def read_file(filename=None):
    _note("torch.cuda.tunable.read_file")
    return False


def set_rotating_buffer_size(buffer_size):
    _note("torch.cuda.tunable.set_rotating_buffer_size")
    _settings["rotating_buffer_kb"] = max(int(buffer_size), 0) * 1024


def get_rotating_buffer_size():
    _note("torch.cuda.tunable.get_rotating_buffer_size")
    return _settings["rotating_buffer_kb"]


def set_numerical_check_tolerances(enable, atol=1e-5, rtol=1e-5):
    _note("torch.cuda.tunable.set_numerical_check_tolerances")


_SETTINGS = (enable, is_enabled, tuning_enable, tuning_is_enabled, record_untuned_enable,
             record_untuned_is_enabled, set_max_tuning_duration, get_max_tuning_duration,
             set_max_tuning_iterations, get_max_tuning_iterations, set_filename, get_filename,
             get_results, get_validators, read_file, set_rotating_buffer_size,
             get_rotating_buffer_size, set_numerical_check_tolerances)
_TUNING = ("tune_gemm_in_file", "mgpu_tune_gemm_in_file")


def plan(torch):
    tunable = getattr(getattr(torch, "cuda", None), "tunable", None)
    if tunable is None:
        return []
    patches = []
    for fn in _SETTINGS:
        if hasattr(tunable, fn.__name__):
            api = f"torch.cuda.tunable.{fn.__name__}"
            patches.append(Patch(tunable, fn.__name__, replacing(fn), (api,), when=MASQUERADE))
    for name in _TUNING:
        if hasattr(tunable, name):
            api = f"torch.cuda.tunable.{name}"
            refuse = _raising("TunableOp GEMM tuning", "has", api)
            patches.append(Patch(tunable, name, refuse, (api,), when=MASQUERADE, kind=RAISES))
    return patches
