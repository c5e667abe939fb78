"""Pinned (page-locked) host memory, while the device used is not CUDA.

Pinned memory only speeds up host-to-CUDA copies; without CUDA there is nothing to pin for, and
torch refuses to pin ("Cannot access accelerator device when none is available").

- ``Tensor.pin_memory()`` returns the tensor itself, marked as pinned by devshim;
  ``Tensor.is_pinned()`` is True for a tensor so marked (the program pinned it and may check),
  otherwise torch's answer. The mark is not carried to copies or views, as pinning is not.
- Factories' ``pin_memory=True`` is dropped and the result marked (devshim/tensors.py).
- ``DataLoader(pin_memory=True)`` is recorded and built as asked: torch's own pinning asks
  ``torch.accelerator`` (masqueraded: devshim/accelerator.py) and calls ``Tensor.pin_memory()``
  on every batch, so each batch is marked, in the main process or torch's pinning thread.

Recorded with requested "pinned" and used the device used.
"""

from __future__ import annotations

import inspect

from devshim import record, runtime
from devshim.patching import MASQUERADE, Patch, wraps

__all__ = ["plan", "PINNED", "mark_pinned"]

PINNED = "pinned"
_MARK = "_devshim_pinned"


def mark_pinned(tensor):
    """Marks ``tensor`` as pinned by devshim (what ``is_pinned`` answers) and returns it."""
    try:
        setattr(tensor, _MARK, True)
    except (AttributeError, RuntimeError, TypeError):
        pass
    return tensor


def _pin_memory(original):
    @wraps(original)
    def pin_memory(self, device=None):
        record.hit("torch.Tensor.pin_memory", PINNED, runtime.used)
        return mark_pinned(self)

    return pin_memory


def _is_pinned(original):
    @wraps(original)
    def is_pinned(self, device=None):
        if getattr(self, _MARK, False):
            return True
        return original(self) if device is None else original(self, device)

    return is_pinned


def _data_loader_init(original):
    signature = inspect.signature(original)

    @wraps(original)
    def __init__(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return original(*args, **kwargs)
        if bound.arguments.get("pin_memory"):
            record.hit("torch.utils.data.DataLoader", PINNED, runtime.used)
        return original(*bound.args, **bound.kwargs)

    return __init__


def plan(torch):
    return [
        Patch(torch.Tensor, "pin_memory", _pin_memory, ("torch.Tensor.pin_memory",),
              when=MASQUERADE),
        Patch(torch.Tensor, "is_pinned", _is_pinned, ("torch.Tensor.is_pinned",), when=MASQUERADE),
        Patch(torch.utils.data.DataLoader, "__init__", _data_loader_init,
              ("torch.utils.data.DataLoader",), when=MASQUERADE),
    ]
