"""``torch.cuda.cudart()``, ``check_error`` and ``torch.cuda.profiler``, while masquerading.

A build without CUDA has no CUDA runtime bindings: ``torch.cuda.cudart()`` returns None there,
so every caller failed with ``AttributeError: 'NoneType' object has no attribute ...`` once the
masquerade made ``torch.cuda.is_available()`` True. torch itself is such a caller:
``torch.cuda.profiler.start()``/``stop()``/``profile()``, and the pinned staging of distributed
checkpoints (``torch.cuda._pin_memory_utils``: ``_create_cpu_state_dict(pin_memory=True,
share_memory=True)``, ``StateDictStager(pin_memory=True)``).

``cudart()`` returns ``Runtime``, which answers for the device used as CUDA's runtime would on a
machine where each call succeeds:

- ``cudaProfilerStart``/``Stop`` (and ``profilerStart``/``Stop``): 0, success. They only tell an
  attached CUDA profiler (Nsight) when to capture; no result depends on them.
- ``cudaHostRegister``/``Unregister`` (and ``hostRegister``/``Unregister``): 0, success.
  Page-locking host memory only speeds copies to a GPU; the memory stays the program's, unchanged.
- ``cudaMemGetInfo(device)``: ``(free, total)`` of the device used, as ``torch.cuda.mem_get_info``.
- ``cudaGetErrorString(code)``: CUDA's text for success, a devshim text for another code.
- ``cudaError.success`` is 0.
- ``cudaStreamCreate``/``Destroy``: NotImplementedError (raw CUDA stream handles have no
  equivalent; devshim/unsupported.py's message).

``check_error(res)``: None for success, as torch's; another code raises ``torch.cuda.CudaError``
naming the code (torch's own would need the runtime to read the code's text).

Every call is recorded (API ``torch.cuda.cudart``, ``torch.cuda.check_error``,
``torch.cuda.profiler.*``), as the other masquerade calls are.
"""

from __future__ import annotations

import contextlib
import enum

from devshim import cuda_masquerade
from devshim.cuda_masquerade import _note, replacing
from devshim.patching import MASQUERADE, Patch
from devshim.unsupported import message

__all__ = ["plan", "Runtime"]

_SUCCESS = 0


class _CudaError(enum.IntEnum):
    success = _SUCCESS


def _error_string(code) -> str:
    if int(code) == _SUCCESS:
        return "no error"
    return f"devshim: CUDA error {int(code)} (no CUDA runtime: the device used is not CUDA)"


def _raw_streams(api):
    def refuse(*args, **kwargs):
        raise NotImplementedError(message("raw CUDA stream handles", "have", api))

    refuse.__name__ = api.rsplit(".", 1)[-1]
    return refuse


class _Runtime:
    """What ``torch.cuda.cudart()`` returns while masquerading (the module docstring)."""

    cudaError = _CudaError

    def cudaGetErrorString(self, code):
        return _error_string(code)

    def cudaProfilerStart(self):
        return _SUCCESS

    def cudaProfilerStop(self):
        return _SUCCESS

    def cudaHostRegister(self, ptr, size, flags):
        return _SUCCESS

    def cudaHostUnregister(self, ptr):
        return _SUCCESS

    def cudaMemGetInfo(self, device):
        backend = cuda_masquerade._backend
        return (backend.free_memory(), backend.total_memory())

    cudaStreamCreate = staticmethod(_raw_streams("torch.cuda.cudart().cudaStreamCreate"))
    cudaStreamDestroy = staticmethod(_raw_streams("torch.cuda.cudart().cudaStreamDestroy"))

    # The names torch binds beside CUDA's, which HIP's rewrite leaves alone.
    getErrorString = cudaGetErrorString
    profilerStart = cudaProfilerStart
    profilerStop = cudaProfilerStop
    hostRegister = cudaHostRegister
    hostUnregister = cudaHostUnregister

    def __repr__(self):
        return "<devshim's CUDA runtime for the device used>"


Runtime = _Runtime()


def cudart():
    _note("torch.cuda.cudart")
    return Runtime


def check_error(res):
    _note("torch.cuda.check_error")
    if int(res) == _SUCCESS:
        return
    import torch

    error = torch.cuda.CudaError.__new__(torch.cuda.CudaError)
    RuntimeError.__init__(error, _error_string(res))
    raise error


def start():
    _note("torch.cuda.profiler.start")


def stop():
    _note("torch.cuda.profiler.stop")


@contextlib.contextmanager
def _profiling():
    yield


def profile():
    _note("torch.cuda.profiler.profile")
    return _profiling()


def plan(torch):
    patches = []
    cuda = getattr(torch, "cuda", None)
    for name, impl in (("cudart", cudart), ("check_error", check_error)):
        if cuda is not None and hasattr(cuda, name):
            patches.append(Patch(cuda, name, replacing(impl), (f"torch.cuda.{name}",),
                                 when=MASQUERADE))
    profiler = getattr(cuda, "profiler", None)
    for impl in (start, stop, profile):
        if profiler is not None and hasattr(profiler, impl.__name__):
            api = f"torch.cuda.profiler.{impl.__name__}"
            patches.append(Patch(profiler, impl.__name__, replacing(impl), (api,),
                                 when=MASQUERADE))
    return patches
