"""The legacy CUDA tensor types: ``torch.cuda.FloatTensor`` and its nine siblings,
``Tensor.type("torch.cuda.FloatTensor")`` and ``torch.set_default_tensor_type``.

Applies only while the device used is not CUDA (CUDA builds have the real types).

- ``torch.cuda.XTensor(*args)`` builds ``torch.XTensor(*args)`` (the CPU legacy constructor:
  sizes, a sequence of data, ...) and moves it to the device used: a tensor of the type's dtype on
  the device a ``cuda`` request lands on.
- ``isinstance(t, torch.cuda.XTensor)`` is true for a tensor of that dtype on the device used.
- ``t.type(torch.cuda.XTensor)`` / ``t.type("torch.cuda.XTensor")`` convert to that dtype on the
  device used. ``t.type()`` (no argument) is torch's own answer, e.g. "torch.FloatTensor" on the
  CPU: like ``t.is_cuda``, it tells the truth about where the tensor is.
- ``torch.set_default_tensor_type(torch.cuda.XTensor)`` sets what the CPU type would
  (``torch.XTensor``: the default dtype).
"""

from __future__ import annotations

from devshim import record, runtime
from devshim.patching import MASQUERADE, Patch, wraps

__all__ = ["plan", "LEGACY_TYPES", "legacy_dtype"]

LEGACY_TYPES = ("BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor",
                "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor")

_by_name = {}  # "torch.cuda.FloatTensor" -> the shim's class


class _LegacyTypeMeta(type):
    """Metaclass of the shim's torch.cuda.XTensor classes: calling one builds a tensor."""

    def __call__(cls, *args, **kwargs):
        kwargs.pop("device", None)
        tensor = cls._cpu_type(*args, **kwargs)
        used = runtime.used
        record.hit(cls._api, "cuda", used)
        if used != "cpu":
            tensor = tensor.to(used)
        return tensor

    def __instancecheck__(cls, obj):
        dtype = getattr(obj, "dtype", None)
        device = getattr(obj, "device", None)
        return dtype == cls.dtype and getattr(device, "type", None) == runtime.used_type

    def __repr__(cls):
        return f"<class '{cls._api}' (devshim: {cls.dtype} on {runtime.used})>"


def _legacy_type(torch, name):
    cpu_type = getattr(torch, name)
    api = f"torch.cuda.{name}"
    cls = _LegacyTypeMeta(name, (), {
        "__doc__": f"devshim: {api}(...) builds torch.{name}(...) on the device used.",
        "__module__": "torch.cuda",
        "__qualname__": name,
        "dtype": cpu_type.dtype,
        "is_sparse": False,
        "_cpu_type": cpu_type,
        "_api": api,
    })
    _by_name[api] = cls
    return cls


def legacy_dtype(spec):
    """The dtype of a CUDA legacy type given as the shim's class or its name; None otherwise."""
    if isinstance(spec, str):
        cls = _by_name.get(spec.strip())
        return None if cls is None else cls.dtype
    if isinstance(spec, _LegacyTypeMeta):
        return spec.dtype
    return None


def _tensor_type(tensor_to):
    def make(original):
        @wraps(original)
        def type(self, dtype=None, non_blocking=False, **kwargs):
            target = legacy_dtype(dtype) if dtype is not None else None
            if target is None:
                if dtype is None and not kwargs and not non_blocking:
                    return original(self)
                return original(self, dtype, non_blocking, **kwargs)
            used = runtime.used
            record.hit("torch.Tensor.type", "cuda", used)
            return tensor_to(self, device=used, dtype=target, non_blocking=non_blocking)

        return type

    return make


def _set_default_tensor_type(original):
    @wraps(original)
    def set_default_tensor_type(t, /):
        target = legacy_dtype(t)
        if target is not None:
            name = t if isinstance(t, str) else f"torch.cuda.{t.__name__}"
            record.hit("torch.set_default_tensor_type", "cuda", runtime.used)
            t = "torch." + name.rsplit(".", 1)[1]
        return original(t)

    return set_default_tensor_type


def plan(torch):
    patches = []
    for name in LEGACY_TYPES:
        if hasattr(torch, name):
            api = f"torch.cuda.{name}"
            patches.append(Patch(torch.cuda, name,
                                 lambda original, name=name: _legacy_type(torch, name),
                                 (api,), when=MASQUERADE))
    patches += [
        Patch(torch.Tensor, "type", _tensor_type(torch._C.TensorBase.to), ("torch.Tensor.type",),
              when=MASQUERADE),
        Patch(torch, "set_default_tensor_type", _set_default_tensor_type,
              ("torch.set_default_tensor_type",), when=MASQUERADE),
    ]
    return patches
