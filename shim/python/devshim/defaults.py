"""Devices that are set once and used later: ``torch.set_default_device``, ``with
torch.device(...)``, ``torch.Generator(device=...)``.

- ``torch.set_default_device(d)``: ``d`` goes through the policy. When it lands on the CPU the
  call becomes ``set_default_device(None)``: torch's default is the CPU already, and this spares
  the program the global TorchFunctionMode that a default device installs (every torch call pays
  for it). ``torch.get_default_device()`` then answers ``cpu``, the truth.
- ``with torch.device("cuda"):`` (and ``torch.utils._device.set_device``): torch builds a
  ``torch.utils._device.DeviceContext``; its constructor's device goes through the policy.
- ``torch.Generator`` becomes a subclass of ``torch._C.Generator`` whose metaclass redirects the
  ``device`` and returns a real ``torch._C.Generator``; ``isinstance(g, torch.Generator)`` holds
  for every generator, including ``torch.default_generator``.
"""

from __future__ import annotations

from devshim import record, runtime
from devshim.patching import Patch, wraps

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


def _generator(original):
    meta = type(original)

    class _GeneratorMeta(meta):
        """Makes ``torch.Generator(device=...)`` a redirected ``torch._C.Generator``."""

        def __call__(cls, device="cpu"):
            used = runtime.redirect(device)
            if used is not None:
                record.hit("torch.Generator", device, used)
                device = used
            return original(device)

        def __instancecheck__(cls, obj):
            return isinstance(obj, original)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, original)

    generator = _GeneratorMeta("Generator", (original,), {
        "__doc__": original.__doc__,
        "__module__": "torch",
        "__qualname__": "Generator",
    })
    return generator


def plan(torch):
    import torch.utils._device as device_module

    return [
        Patch(torch, "set_default_device", _set_default_device, ("torch.set_default_device",)),
        Patch(device_module.DeviceContext, "__init__", _device_context_init,
              ("torch.device.__enter__",)),
        Patch(torch, "Generator", _generator, ("torch.Generator",)),
    ]
