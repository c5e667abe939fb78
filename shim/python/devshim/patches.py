"""The torch patches that apply the redirection policy (devshim/policy.py).

Carried so far: every torch factory function that takes a device (found from torch itself: the
callables whose documentation lists a ``device (torch.device)`` argument), ``Tensor.to``,
``Tensor.cuda``, ``nn.Module.to``, ``nn.Module.cuda``, and the ``torch.cuda`` queries CUDA-first
code asks before anything else (``is_available``, ``device_count``, ``current_device``,
``synchronize``), which answer for the device actually used. Each original is bound once per
function, and ``remove()`` puts every one back.
"""

from __future__ import annotations

import functools
import os
import threading

from devshim.policy import Hardware, format_device, resolve

_lock = threading.RLock()
_originals = []  # (owner, name, original)
_state = {"override": False, "hardware": None, "policy": "default"}


def carried_factories(torch):
    """Names of torch's factory functions that take a device, read from torch's own docs."""
    names = []
    for name in dir(torch):
        if name.startswith("_"):
            continue
        fn = getattr(torch, name, None)
        if callable(fn) and not isinstance(fn, type):
            doc = getattr(fn, "__doc__", None) or ""
            if "device (:class:`torch.device`" in doc:
                names.append(name)
    return names


def _hardware(torch):
    mps = getattr(torch.backends, "mps", None)
    return Hardware(mps=bool(mps is not None and mps.is_available()),
                    cuda_device_count=torch.cuda.device_count() if torch.cuda.is_available() else 0)


def redirect(device):
    """The device (a string) that a requested device lands on; None stays None."""
    if device is None:
        return None
    d = resolve(device, _state["hardware"], _state["override"], _state["policy"])
    _state["override"] = d.override
    return d.device_str


def _is_device_like(arg):
    if isinstance(arg, str):
        head = arg.split(":", 1)[0]
        return head in ("cpu", "cuda", "mps")
    return type(arg).__name__ == "device"


def _patch(owner, name, make):
    original = getattr(owner, name)
    setattr(owner, name, make(original))
    _originals.append((owner, name, original))


def _factory(name, accelerator):
    like = name.endswith("_like")

    def make(original):
        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            device = kwargs.get("device")
            if device is not None:
                kwargs["device"] = redirect(device)
            elif accelerator is not None and not like:
                kwargs["device"] = accelerator
            return original(*args, **kwargs)

        return wrapper

    return make


def _tensor_to(original):
    @functools.wraps(original)
    def to(self, *args, **kwargs):
        if args and _is_device_like(args[0]):
            args = (redirect(args[0]),) + args[1:]
        if kwargs.get("device") is not None:
            kwargs["device"] = redirect(kwargs["device"])
        return original(self, *args, **kwargs)

    return to


def _cuda_method(to_name):
    def make(original):
        @functools.wraps(original)
        def cuda(self, device=None, *args, **kwargs):
            target = redirect("cuda" if device is None else
                              (f"cuda:{device}" if isinstance(device, int) else device))
            return getattr(self, to_name)(target)

        return cuda

    return make


def apply(torch):
    """Patches torch once; a second call does nothing."""
    with _lock:
        if _originals:
            return
        _state["hardware"] = _hardware(torch)
        _state["policy"] = os.environ.get("TORCHDEVICE_POLICY", "default")
        accel = _state["hardware"].accelerator
        for name in carried_factories(torch):
            _patch(torch, name, _factory(name, accel))
        _patch(torch.Tensor, "to", _tensor_to)
        _patch(torch.Tensor, "cuda", _cuda_method("to"))
        _patch(torch.nn.Module, "to", _tensor_to)
        _patch(torch.nn.Module, "cuda", _cuda_method("to"))
        used = format_device(resolve("cuda", _state["hardware"]).device)
        used_count = max(1, _state["hardware"].cuda_device_count)
        # torch.cuda answers for the device actually used: CUDA-first code takes its CUDA path,
        # which the patches above redirect.
        _patch(torch.cuda, "is_available", lambda original: functools.wraps(original)(lambda: True))
        _patch(torch.cuda, "device_count",
               lambda original: functools.wraps(original)(lambda: used_count))
        if used.startswith("cuda"):
            return  # real CUDA: its own current_device and synchronize are right
        _patch(torch.cuda, "current_device",
               lambda original: functools.wraps(original)(lambda: 0))

        def synchronize(device=None):
            if used == "mps":
                torch.mps.synchronize()

        _patch(torch.cuda, "synchronize", lambda original: functools.wraps(original)(synchronize))


def remove():
    """Restores every patched attribute (for tests)."""
    with _lock:
        while _originals:
            owner, name, original = _originals.pop()
            setattr(owner, name, original)
        _state["override"] = False
