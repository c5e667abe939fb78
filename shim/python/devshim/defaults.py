"""Devices that are set once and used later: ``torch.set_default_device``, ``with
torch.device(...)``, ``torch.Generator(device=...)``.

- ``torch.set_default_device(d)``: ``d`` goes through the policy. When it lands on the CPU the
  call becomes ``set_default_device(None)``: torch's default is the CPU already, and this spares
  the program the global TorchFunctionMode that a default device installs (every torch call pays
  for it). ``torch.get_default_device()`` then answers ``cpu``, the truth.
- ``with torch.device("cuda"):`` (and ``torch.utils._device.set_device``): torch builds a
  ``torch.utils._device.DeviceContext``; its constructor's device goes through the policy. While
  the CPU masquerades as CUDA, the tensors that such a context's factories make for a "cuda"
  request (the parameters of ``with torch.device("cuda"): model = GPT(config)``) are counted as
  placed (devshim/placed.py), as ``.to("cuda")`` of the same model would be: code that frees
  memory only when ``torch.cuda.memory_allocated() > 0`` (litgpt's conftest: ``gc.collect()``
  after each test) must see it, or the models of a whole file pile up in host memory.
- ``torch.Generator(device=...)``: the device goes through the policy. ``torch.Generator`` stays
  torch's own class (``torch._C.Generator``): its constructor is replaced in place
  (devshim/native.py), so ``type(g) is torch.Generator`` and annotations hold as without devshim.
"""

from __future__ import annotations

from devshim import devices, placed, record, runtime
from devshim.patching import CONSTRUCTOR, MASQUERADE, Patch, wraps
from devshim.policy import parse_device

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


# Set on a DeviceContext whose factories' tensors are placed on "cuda" as the program sees it.
_PLACES = "_devshim_places"


def _places(device, used) -> bool:
    """Whether a DeviceContext for ``device`` (redirected to ``used``, or None) puts its factories'
    tensors on "cuda" as the program sees it: a CUDA request redirected (``keep``), or the CPU
    device object built from one (``redirect``)."""
    if used is None:
        return devices.built_from_request(device)
    try:
        return parse_device(device)[0] == "cuda"
    except (ValueError, TypeError):
        return False


def _device_context_init(original):
    counting = placed.wanted()

    @wraps(original)
    def __init__(self, device):
        used = runtime.redirect(device)
        places = counting and _places(device, used)
        if used is not None:
            record.hit("torch.device.__enter__", device, used)
            device = used
        original(self, device)
        if places:
            setattr(self, _PLACES, True)

    return __init__


def _device_context_torch_function(original):
    """``DeviceContext.__torch_function__``: a context that places counts the tensors its factory
    calls make on its device (those given no device of their own)."""
    from torch.utils._device import _device_constructors

    @wraps(original)
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if not self.__dict__.get(_PLACES) or (kwargs and kwargs.get("device") is not None):
            return original(self, func, types, args, kwargs)
        result = original(self, func, types, args, kwargs)
        if func in _device_constructors():
            placed.track_storage(result)
        return result

    return __torch_function__


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
        Patch(device_module.DeviceContext, "__torch_function__", _device_context_torch_function,
              ("torch.device.__enter__",), when=MASQUERADE, calls_original=True),
        Patch(torch.Generator, "__new__", _generator_new, ("torch.Generator",),
              target=CONSTRUCTOR),
    ]
