"""Mixed precision: ``torch.autocast`` / ``torch.amp.autocast`` / ``torch.cuda.amp.autocast`` and
``torch.amp.GradScaler`` / ``torch.cuda.amp.GradScaler``.

- autocast: the ``device_type`` goes through the policy (``"cuda"`` -> the type of the device
  used). The dtype the program asked for is kept. When it asked for none and requested CUDA, the
  CUDA default (``torch.get_autocast_dtype("cuda")``, float16 unless changed) is used rather than
  the CPU default (bfloat16), so the numerics are those the program was written for: torch's CPU
  autocast supports float16 and bfloat16 alike (checked in torch 2.13), MPS autocast float16
  (bfloat16 on macOS 14+). CUDA autocast also takes float32 and float64, which torch's CPU
  autocast refuses (disabling itself, with a warning): a redirected CUDA block on the CPU stays
  enabled with them, silently, as on CUDA.
- GradScaler: its ``device`` (default "cuda") goes through the policy; torch's own CPU and MPS
  GradScaler then do the work (``scale``, ``unscale_``, ``step``, ``update`` and the inf/NaN
  checks have CPU kernels), so a scaled training step gives what an unscaled one does.
- While the device used is not CUDA, ``torch.is_autocast_enabled()`` / ``("cuda")``,
  ``torch.get_autocast_dtype("cuda")`` and the deprecated ``torch.get_autocast_gpu_dtype()``
  answer for the device used, so code that asks inside a redirected ``autocast("cuda")`` block
  sees it enabled, with its dtype; outside any block CUDA's dtype is CUDA's own setting (float16
  unless set), not the CPU's bfloat16. ``torch.set_autocast_dtype("cuda", dtype)`` (and
  ``set_autocast_gpu_dtype``) set CUDA's dtype, which a later ``autocast("cuda")`` without a dtype
  takes, and, inside an enabled block, the device used's, which its kernels read;
  ``torch.set_autocast_enabled("cuda", flag)`` (and its one-argument form, which means CUDA) sets
  the device used's.

The patches are on the classes' ``__init__`` (not replacements of the classes), so subclasses —
torch.cuda.amp's among them — and ``isinstance`` checks keep working.
"""

from __future__ import annotations

import warnings

from devshim import record, runtime
from devshim.patching import MASQUERADE, Patch, unpatched, wraps

__all__ = ["plan"]


def _autocast_init(cuda_default_dtype, cpu_dtypes):
    """cpu_dtypes: what torch's CPU autocast casts to; it disables itself, with a warning, for any
    other dtype."""

    def make(original):
        @wraps(original)
        def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
            if not isinstance(device_type, str):
                return original(self, device_type, dtype, enabled, cache_enabled)
            used = runtime.redirect(device_type)
            if used is None:
                return original(self, device_type, dtype, enabled, cache_enabled)
            used_type = used.split(":", 1)[0]
            from_cuda = device_type.startswith("cuda")
            if dtype is None and from_cuda:
                dtype = cuda_default_dtype("cuda")
            legacy = type(self).__module__.startswith("torch.cuda")
            api = "torch.cuda.amp.autocast" if legacy else "torch.autocast"
            record.hit(api, device_type, used_type)
            if not (from_cuda and used_type == "cpu" and enabled and dtype is not None
                    and dtype.is_floating_point and dtype not in cpu_dtypes):
                return original(self, used_type, dtype, enabled, cache_enabled)
            # CUDA autocast casts to any floating dtype (float32, float64: mmengine's
            # AmpOptimWrapper(dtype="float64")); the CPU's kernels cast to whatever dtype is set,
            # so the block stays enabled with it, and without the CPU's refusal.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "In CPU autocast, but the target dtype")
                original(self, used_type, dtype, enabled, cache_enabled)
            self._enabled = True
            return None

        return __init__

    return make


def _grad_scaler_init(original):
    @wraps(original)
    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if isinstance(device, str) or type(device).__name__ == "device":
            used = runtime.redirect(device)
            if used is not None:
                legacy = type(self).__module__.startswith("torch.cuda")
                api = "torch.cuda.amp.GradScaler" if legacy else "torch.amp.GradScaler"
                record.hit(api, device, used)
                device = used.split(":", 1)[0]
        return original(self, device, init_scale, growth_factor, backoff_factor, growth_interval,
                        enabled)

    return __init__


def _cuda_query(api, is_autocast_enabled):
    """``torch.is_autocast_enabled`` / ``get_autocast_dtype``: "cuda" (or nothing) -> used type;
    CUDA's dtype is the device used's inside an enabled block, else CUDA's own (_cuda_dtype)."""

    def make(original):
        @wraps(original)
        def query(*args, **kwargs):
            if not args and not kwargs:
                if api == "torch.get_autocast_dtype":
                    return original()
                record.hit(api, "cuda", runtime.used_type, asked=True)
                return original(runtime.used_type)
            device_type = args[0] if args else kwargs.get("device_type")
            if device_type != "cuda":
                return original(*args, **kwargs)
            record.hit(api, "cuda", runtime.used_type, asked=True)
            if api == "torch.get_autocast_dtype":
                return _cuda_dtype(original, is_autocast_enabled)
            if args:
                args = (runtime.used_type,) + args[1:]
            else:
                kwargs["device_type"] = runtime.used_type
            return original(*args, **kwargs)

        return query

    return make


def _cuda_dtype(get_autocast_dtype, is_autocast_enabled):
    """What ``get_autocast_dtype("cuda")`` gives on CUDA: inside an enabled block (a redirected
    ``autocast("cuda")`` enables the device used's) that block's dtype, else CUDA's own setting
    (float16 unless set), which a later ``autocast("cuda")`` without a dtype takes. (Inside a
    block opened for the CPU itself it answers the CPU's dtype, where CUDA would answer its own.)"""
    used_type = runtime.used_type
    if is_autocast_enabled(used_type):
        return get_autocast_dtype(used_type)
    return get_autocast_dtype("cuda")


def _gpu_dtype(get_autocast_dtype, is_autocast_enabled):
    """``torch.get_autocast_gpu_dtype()`` (CUDA's, deprecated): ``get_autocast_dtype("cuda")``."""

    def make(original):
        @wraps(original)
        def get_autocast_gpu_dtype():
            record.hit("torch.get_autocast_gpu_dtype", "cuda", runtime.used_type, asked=True)
            return _cuda_dtype(get_autocast_dtype, is_autocast_enabled)

        return get_autocast_gpu_dtype

    return make


def _cuda_setter(api, set_autocast_dtype, is_autocast_enabled):
    """``set_autocast_dtype("cuda", d)``, ``set_autocast_gpu_dtype(d)``: CUDA's own dtype, and the
    device used's while autocast is enabled there (inside a redirected block, whose kernels read
    it), so that a get-set-restore round trip outside a block leaves the CPU's default alone;
    ``set_autocast_enabled("cuda", flag)`` / ``(flag)``: the device used's."""

    def make(original):
        @wraps(original)
        def setter(*args, **kwargs):
            if api == "torch.set_autocast_gpu_dtype" or (
                    api == "torch.set_autocast_enabled" and len(args) + len(kwargs) == 1):
                args = ("cuda",) + args  # CUDA's, in the one-argument form
            elif not args and "device_type" in kwargs:
                args = (kwargs.pop("device_type"),)
            if not args or args[0] != "cuda":
                return original(*args, **kwargs)
            record.hit(api, "cuda", runtime.used_type, asked=True)
            if api == "torch.set_autocast_enabled":
                return original(runtime.used_type, *args[1:], **kwargs)
            set_autocast_dtype("cuda", *args[1:], **kwargs)
            if is_autocast_enabled(runtime.used_type):
                return set_autocast_dtype(runtime.used_type, *args[1:], **kwargs)
            return None

        return setter

    return make


def plan(torch):
    autocast = torch.amp.autocast_mode.autocast
    patches = [
        Patch(autocast, "__init__",
              _autocast_init(unpatched(torch.get_autocast_dtype), (torch.bfloat16, torch.float16)),
              ("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast")),
        Patch(torch.amp.GradScaler, "__init__", _grad_scaler_init,
              ("torch.amp.GradScaler", "torch.cuda.amp.GradScaler")),
    ]
    enabled = unpatched(getattr(torch, "is_autocast_enabled", None))
    for name in ("is_autocast_enabled", "get_autocast_dtype"):
        if hasattr(torch, name) and enabled is not None:
            patches.append(Patch(torch, name, _cuda_query(f"torch.{name}", enabled),
                                 (f"torch.{name}",), when=MASQUERADE, calls_original=True))
    get_dtype = unpatched(getattr(torch, "get_autocast_dtype", None))
    set_dtype = unpatched(getattr(torch, "set_autocast_dtype", None))
    if hasattr(torch, "get_autocast_gpu_dtype") and get_dtype is not None and enabled is not None:
        patches.append(Patch(torch, "get_autocast_gpu_dtype", _gpu_dtype(get_dtype, enabled),
                             ("torch.get_autocast_gpu_dtype",), when=MASQUERADE))
    for name in ("set_autocast_dtype", "set_autocast_gpu_dtype", "set_autocast_enabled"):
        if hasattr(torch, name) and set_dtype is not None and enabled is not None:
            patches.append(Patch(torch, name, _cuda_setter(f"torch.{name}", set_dtype, enabled),
                                 (f"torch.{name}",), when=MASQUERADE, calls_original=True))
    return patches
