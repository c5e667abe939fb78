"""``torch.backends.cuda.cufft_plan_cache``, while masquerading.

CUDA keeps the cuFFT plans of recent FFTs in a cache per device; ``cufft_plan_cache`` (and
``cufft_plan_cache[device]``) reads its ``size``, reads and sets its ``max_size``, and
``clear()``s it. A build without CUDA answers each with torch's own RuntimeError ("... without
ATen_cuda library"), so once the masquerade made ``torch.cuda.is_available()`` True, code that
tunes the cache when CUDA is there failed.

The device used keeps no plan cache (its FFTs plan as they run), so here:

- ``size`` is 0: no plan is cached. Setting it raises torch's own RuntimeError (it is read-only
  on CUDA too).
- ``max_size`` answers what was set for that device index, else CUDA's default capacity (4096);
  setting a negative value raises RuntimeError, as CUDA's does.
- ``clear()`` does nothing: there is nothing to clear.
- ``cufft_plan_cache[device]`` is the cache of the selected device (``current_device()``) for
  any device, as the masquerade's other per-device queries answer for the one device used; torch's
  own refused a device object that ``redirect`` built as the device used (``Expected a cuda
  device, but got: cpu``).

torch binds the cache's accessors when ``torch.backends.cuda`` is imported (each attribute of
``cuFFTPlanCache`` is a descriptor holding its getter and setter), so the patches replace those
held functions, and ``cuFFTPlanCache.clear``. Every call is recorded (API
``torch.backends.cuda.cufft_plan_cache.<size|max_size|clear>``).
"""

from __future__ import annotations

import sys

from devshim import cuda_masquerade, record, runtime
from devshim.cuda_masquerade import replacing
from devshim.patching import MASQUERADE, Patch, wraps

__all__ = ["plan", "reset", "DEFAULT_MAX_SIZE"]

DEFAULT_MAX_SIZE = 4096  # CUDA 10 and later (torch's docs: "CUDA 10 and newer ... 4096")
_API = "torch.backends.cuda.cufft_plan_cache"

_max_sizes: dict[int, int] = {}
_plumbing = ""  # torch/backends/cuda/__init__.py: the descriptors and manager that call us


def _note(api) -> None:
    """Records a use of the cache by the program: the first frame outside torch's descriptor and
    manager plumbing is the call site; none is recorded when that frame is torch's own."""
    if record.compiling():
        return
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename == _plumbing:
        f = f.f_back
    if f is None or f.f_code.co_filename.startswith(cuda_masquerade._torch_dir):
        return
    record.hit_at(f, api, "cuda", runtime.used, asked=True)


def reset() -> None:
    """Every device back to the default capacity (each activation)."""
    _max_sizes.clear()


def size(device_index):
    _note(f"{_API}.size")
    return 0


def max_size(device_index):
    _note(f"{_API}.max_size")
    return _max_sizes.get(device_index, DEFAULT_MAX_SIZE)


def set_max_size(device_index, value):
    _note(f"{_API}.max_size")
    value = int(value)
    if value < 0:
        raise RuntimeError(f"cuFFT plan cache size must be non-negative, but got {value}")
    _max_sizes[device_index] = value


def _selected_device_cache(original):
    """torch's own lookup, asked for the selected device whatever device it is given."""

    @wraps(original)
    def cache_for(self, device):
        return original(self, runtime.selected_cuda_index())

    return cache_for


def clear(self):
    _note(f"{_API}.clear")


def plan(torch):
    cuda_backends = getattr(getattr(torch, "backends", None), "cuda", None)
    cache_class = getattr(cuda_backends, "cuFFTPlanCache", None)
    if cache_class is None:
        return []
    global _plumbing
    _plumbing = cache_class.__init__.__code__.co_filename
    patches = []
    held = vars(cache_class)
    # (descriptor, the attribute of it holding a function, devshim's function, API)
    for prop, slot, impl, api in (("size", "getter", size, "size"),
                                  ("max_size", "getter", max_size, "max_size"),
                                  ("max_size", "setter", set_max_size, "max_size")):
        descriptor = held.get(prop)
        if descriptor is not None and callable(getattr(descriptor, slot, None)):
            patches.append(Patch(descriptor, slot, replacing(impl), (f"{_API}.{api}",),
                                 when=MASQUERADE))
    manager_class = type(getattr(cuda_backends, "cufft_plan_cache", None))
    if "__getitem__" in vars(manager_class):
        patches.append(Patch(manager_class, "__getitem__", _selected_device_cache, (_API,),
                             when=MASQUERADE))
    if "clear" in held:
        patches.append(Patch(cache_class, "clear", replacing(clear), (f"{_API}.clear",),
                             when=MASQUERADE))
    return patches
