"""Devices that are set once and used later: ``torch.set_default_device``, ``with
torch.device(...)``, ``torch.Generator(device=...)``.

- ``torch.set_default_device(d)``: ``d`` goes through the policy. When it lands on the CPU the
  call becomes ``set_default_device(None)``: torch's default is the CPU already, and this spares
  the program the global TorchFunctionMode that a default device installs (every torch call pays
  for it). ``torch.get_default_device()`` then answers ``cpu``, the truth.
- ``with torch.device("cuda"):`` (and ``torch.utils._device.set_device``): torch builds a
  ``torch.utils._device.DeviceContext``; its constructor's device goes through the policy.
- ``torch.Generator(device=...)``: the device goes through the policy. ``torch.Generator`` stays
  torch's own class (``torch._C.Generator``): its constructor is replaced in place
  (devshim/native.py), so ``type(g) is torch.Generator`` and annotations hold as without devshim.
"""

from __future__ import annotations

from devshim import record, runtime
from devshim.patching import CONSTRUCTOR, Patch, wraps

__all__ = ["plan"]


def _set_default_device(original):
    @wraps(original)
    def set_default_device(device):
        if device is not None:
            used = runtime.redirect(device)
            if used is not None:
                record.hit("torch.set_default_device", device, used)
                device = used
            if device == "cpu" or (getattr(device, "type", None) == "cpu"
                                   and device.index in (None, 0)):
                device = None
        return original(device)

    return set_default_device


def _device_context_init(original):
    @wraps(original)
    def __init__(self, device):
        used = runtime.redirect(device)
        if used is not None:
            record.hit("torch.device.__enter__", device, used)
            device = used
        return original(self, device)

    return __init__


def _generator_new(original_new):
    """``torch.Generator.__new__``: ``Generator(device="cpu")`` with the device redirected."""

    def __new__(cls, *args, **kwargs):
        if args:
            device, args = args[0], args[1:]
        else:
            device = kwargs.pop("device", None)
        if device is not None:
            used = runtime.redirect(device)
            if used is not None:
                record.hit("torch.Generator", device, used)
                device = used
            kwargs["device"] = device
        return original_new(cls, args, kwargs)

    return __new__


def plan(torch):
    import torch.utils._device as device_module

    return [
        Patch(torch, "set_default_device", _set_default_device, ("torch.set_default_device",)),
        Patch(device_module.DeviceContext, "__init__", _device_context_init,
              ("torch.device.__enter__",)),
        Patch(torch.Generator, "__new__", _generator_new, ("torch.Generator",),
              target=CONSTRUCTOR),
    ]
