"""``torch.accelerator`` and ``torch.get_device_module`` answering as on a one-CUDA-device machine.

Applies only while masquerading (like devshim/cuda_masquerade.py, whose backend and record it
shares). Device-agnostic code asks torch.accelerator what the accelerator is instead of asking
torch.cuda; on a machine without one, torch raises ``RuntimeError: Cannot access accelerator
device when none is available`` from most of these calls. While the shim masquerades, the answers
agree with torch.cuda's:

- ``current_accelerator(check_available=False)`` is ``torch.device("cuda")`` (index None, as
  torch gives it) — a real device object of type "cuda", built with torch's own constructor
  whatever TORCHDEVICE_DEVICE_OBJECTS says (devshim/devices.py): it names the accelerator, and
  ``.to()`` of it lands on the device used;
- ``is_available()`` True, ``device_count()`` torch.cuda's (1, or the size of a distributed job
  on this host: runtime.masquerade_device_count), ``current_device_index()`` (and the deprecated
  ``current_device_idx``) torch.cuda's ``current_device()``; ``set_device_index``/
  ``set_device_idx`` select as ``torch.cuda.set_device`` does (any index is accepted: one the
  masquerade lacks selects device 0), and ``device_index(i)`` accepts any index;
- ``synchronize``, ``empty_cache``, ``empty_host_cache``, the memory queries (``memory_stats``,
  ``memory_allocated``, ``max_memory_allocated``, ``memory_reserved``, ``max_memory_reserved``,
  ``reset_peak_memory_stats``, ``reset_accumulated_memory_stats``, ``get_memory_info``) give
  torch.cuda's masqueraded answers (devshim/backends.py: honest values of the device used);
- ``get_device_capability()`` is ``{"supported_dtypes": ...}`` of the device used;
- ``current_stream()``/``set_stream()`` are torch.cuda's (devshim/streams.py);
- ``torch.get_device_module(None)`` and any "cuda" request give ``torch.cuda`` (masqueraded);
  other devices are torch's answer;
- while the CPU or MPS masquerades, its module (``torch.cpu``, ``torch.mps``) gains torch.cuda's
  memory queries that it lacks (``mem_get_info``, ``memory_allocated``, ``empty_cache``, ...:
  ``MEMORY_QUERIES``), each calling torch.cuda's: code that reaches the device module through a
  device object (``getattr(torch, device.type)``) finds them whatever device object it holds.

Every replacement keeps the original's signature (positional-only parameters included) and is
recorded as ``torch.accelerator.<name>`` with requested "cuda" (or "cuda:N").
"""

from __future__ import annotations

from devshim import cuda_masquerade, runtime
from devshim.cuda_masquerade import _note, replacing, replacing_class
from devshim.patching import MASQUERADE, Patch

__all__ = ["plan", "MEMORY_QUERIES"]

_torch = None
_cuda_device = None  # torch.device("cuda") built with torch's own constructor, at plan()


def _backend():
    return cuda_masquerade._backend


# --------------------------------------------------------------------------- devices


def current_accelerator(check_available=False):
    _note("torch.accelerator.current_accelerator")
    return _cuda_device


def is_available():
    _note("torch.accelerator.is_available")
    return True


def device_count():
    _note("torch.accelerator.device_count")
    return runtime.masquerade_device_count()


def current_device_index():
    _note("torch.accelerator.current_device_index")
    return runtime.selected_cuda_index()


def current_device_idx():
    _note("torch.accelerator.current_device_idx")
    return runtime.selected_cuda_index()


def set_device_index(device, /):
    _note("torch.accelerator.set_device_index", device)
    runtime.select_cuda_index(device)


def set_device_idx(device, /):
    _note("torch.accelerator.set_device_idx", device)
    runtime.select_cuda_index(device)


class device_index:
    """``torch.accelerator.device_index(i)``: selects device ``i`` for the block (there is one)."""

    def __init__(self, device, /):
        _note("torch.accelerator.device_index", device)
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = 0

    def __exit__(self, *exc_info):
        return None


def synchronize(device=None, /):
    _note("torch.accelerator.synchronize", device)
    _backend().synchronize()


def get_device_capability(device=None, /):
    _note("torch.accelerator.get_device_capability", device)
    # What torch reports for the CPU when asked for it by index: the dtypes tensors may have.
    t = _torch
    dtypes = {getattr(t, n) for n in dir(t) if isinstance(getattr(t, n, None), t.dtype)}
    return {"supported_dtypes": dtypes}


def current_stream(device=None, /):
    _note("torch.accelerator.current_stream", device)
    return _torch.cuda.current_stream()


def set_stream(stream):
    _note("torch.accelerator.set_stream")
    _torch.cuda.set_stream(stream)


# --------------------------------------------------------------------------- memory


def empty_cache():
    _note("torch.accelerator.empty_cache")
    _backend().empty_cache()


def empty_host_cache():
    _note("torch.accelerator.empty_host_cache")


def memory_stats(device_index=None, /):
    _note("torch.accelerator.memory_stats", device_index)
    return cuda_masquerade._stats()


def memory_allocated(device_index=None, /):
    _note("torch.accelerator.memory_allocated", device_index)
    return _backend().allocated()


def max_memory_allocated(device_index=None, /):
    _note("torch.accelerator.max_memory_allocated", device_index)
    return _backend().peak_allocated()


def memory_reserved(device_index=None, /):
    _note("torch.accelerator.memory_reserved", device_index)
    return _backend().reserved()


def max_memory_reserved(device_index=None, /):
    _note("torch.accelerator.max_memory_reserved", device_index)
    return _backend().peak_reserved()


def reset_peak_memory_stats(device_index=None, /):
    _note("torch.accelerator.reset_peak_memory_stats", device_index)
    _backend().reset_peaks()


def reset_accumulated_memory_stats(device_index=None, /):
    _note("torch.accelerator.reset_accumulated_memory_stats", device_index)


def get_memory_info(device_index=None, /):
    _note("torch.accelerator.get_memory_info", device_index)
    b = _backend()
    return (b.free_memory(), b.total_memory())


# --------------------------------------------------------------------------- get_device_module


def _get_device_module(original):
    def get_device_module(device=None):
        if device is None or (isinstance(device, str) and device.split(":", 1)[0] == "cuda"):
            _note("torch.get_device_module", device)
            return _torch.cuda
        return original(device)

    if original is not None:
        copy = replacing(get_device_module)(original)
        return copy
    return get_device_module


# ------------------------------------------------------------------- torch.cpu and torch.mps

# torch.cuda's memory queries that the module of the device in use (torch.cpu, torch.mps) lacks.
# Device-agnostic code reaches a device's module through a device object (``getattr(torch,
# device.type)``, ``torch.get_device_module(device)``): a placed tensor's device, or a "cuda"
# device object that redirect built as the device in use, leads it to torch.cpu or torch.mps,
# where these raise AttributeError (diffusers' AutoOffloadStrategy: "Do not know how to obtain
# memory info"). While that device masquerades as CUDA it is the device those queries are about.
# What the module has of its own stays torch's (torch.mps.empty_cache).
MEMORY_QUERIES = (
    "mem_get_info", "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
    "reset_accumulated_memory_stats", "empty_cache",
)
# The device types whose torch module gains them (not "cuda": nothing masquerades there).
_QUERIED_MODULES = ("cpu", "mps")


def _lacks(module, name) -> bool:
    """Whether torch's ``module`` has no ``name`` of its own (one the shim added does not count:
    the plan is the same while the shim is active, as conformance makes it)."""
    fn = getattr(module, name, None)
    return fn is None or getattr(fn, "__devshim_added__", False)


def _asking_torch_cuda(module_name, name):
    """A maker of ``torch.<module_name>.<name>`` (which torch lacks) that calls
    ``torch.cuda.<name>`` when called: the masquerade's answer, or whatever replaced it since (a
    test's mock). The record is torch.cuda's, at the program's call site."""

    def make(original):
        def query(*args, **kwargs):
            return getattr(_torch.cuda, name)(*args, **kwargs)

        query.__name__ = query.__qualname__ = name
        query.__module__ = f"torch.{module_name}"
        query.__doc__ = f"torch.cuda.{name}: {module_name} masquerades as CUDA (devshim)."
        query.__devshim_added__ = True
        return query

    return make


_FUNCTIONS = (
    current_accelerator, is_available, device_count, current_device_index, current_device_idx,
    set_device_index, set_device_idx, synchronize, get_device_capability, current_stream,
    set_stream, empty_cache, empty_host_cache, memory_stats, memory_allocated,
    max_memory_allocated, memory_reserved, max_memory_reserved, reset_peak_memory_stats,
    reset_accumulated_memory_stats, get_memory_info,
)


def plan(torch):
    global _torch, _cuda_device
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is None:  # torch < 2.6
        return []
    _torch = torch
    # "cuda" without an index is built as written under every device-object policy.
    _cuda_device = torch.device("cuda")
    patches = []
    for impl in _FUNCTIONS:
        name = impl.__name__
        if hasattr(accelerator, name):
            patches.append(Patch(accelerator, name, replacing(impl), (f"torch.accelerator.{name}",),
                                 when=MASQUERADE))
    if hasattr(accelerator, "device_index"):
        patches.append(Patch(accelerator, "device_index", replacing_class(device_index),
                             ("torch.accelerator.device_index",), when=MASQUERADE))
    used = runtime.used_type
    module = getattr(torch, used, None) if used in _QUERIED_MODULES else None
    if module is not None:
        patches.extend(Patch(module, name, _asking_torch_cuda(used, name),
                             (f"torch.{used}.{name}",), when=MASQUERADE)
                       for name in MEMORY_QUERIES
                       if _lacks(module, name) and hasattr(torch.cuda, name))
    if hasattr(torch, "get_device_module"):
        patches.append(Patch(torch, "get_device_module", _get_device_module,
                             ("torch.get_device_module",), when=MASQUERADE))
    return patches
