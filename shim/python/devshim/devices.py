"""``torch.device(...)`` objects: the device-identity policy (TORCHDEVICE_DEVICE_OBJECTS).

A tensor's ``.device`` always tells where its data is (the shim never lies about it: torch's own
code, kernels, ``.numpy()`` and ``.cpu()`` depend on it). What a program compares it with is a
device object it built itself, ``torch.device("cuda", 0)``; CUDA-written tests assert
``param.device == torch.device("cuda", 0)`` after moving a module "to cuda", or compare types,
``param.device.type == torch.device("cuda").type``. Three answers, each with users (so a
setting, not a choice made once):

- ``redirect`` (the default): a device object is a device request like any other. While the shim
  redirects, ``torch.device(...)`` of type "cuda" or "mps" (strings, ``(type, index)``,
  ``type=``/``index=`` keywords, another device object, or a bare index) without an index or with
  one that exists goes through the policy: ``torch.device("cuda")`` and ``torch.device("cuda",
  0)`` are ``device(type='cpu')`` on a CPU-only machine, so identity and type comparisons with a
  placed tensor's device hold and ``tensor.device`` stays true. Recorded as API
  ``torch.device``. An index that does not exist (``cuda:1`` on one device) and "cpu", "meta",
  ... are left as written. The price: ``torch.device("cuda", 0).index`` is None (a CPU device has
  no index; ``device("cpu", 0)`` would not equal a CPU tensor's device), and code that checks
  ``.type == "cuda"`` of the object it built takes the path of the device used (accelerate's
  ``PartialState.device`` sets up no GradScaler; Lightning's ``CUDAAccelerator`` refuses it).
  ``.cuda(d)`` of such an object lands on the device used (devshim/tensors.py).
- ``redirect-indexed``: as ``redirect`` for objects with an index that exists; ``"cuda"`` with
  no index is left as written, so library code that keeps such an object as its device
  (accelerate) takes its CUDA path, and type comparisons with it fail.
- ``keep``: device objects are what the program wrote (``torch.device("cuda", 0)`` has type
  "cuda" and index 0, as CUDA code that reads ``.index`` or checks ``.type`` expects); the request
  is redirected where it is used (``.to()``, factories, ...). Identity assertions against a
  "cuda" device object then fail, as they would on a CPU without the shim, and so do libraries
  that keep such an object beside their tensors (tensordict's ``TensorDict(device="cuda:0")``).

docs/shim.md ("Which is the default") has the evidence behind the default.

Both: while masquerading, a bare index (``torch.device(0)``), which torch resolves to the current
accelerator and refuses when there is none (``RuntimeError: Cannot access accelerator device
when none is available``), means ``cuda:<index>`` — what it gives on a CUDA machine.

``torch._C._nn._parse_to`` (the parser of ``.to()``'s arguments that ``nn.Module.to`` uses, and
libraries with a ``.to`` of their own: tensordict, Lightning) builds its device object in C: its
result's device gets the same policy, and a bare index the same meaning.

``torch.device`` stays torch's own class: its constructor is replaced in place
(devshim/native.py), so ``type(d) is torch.device``, annotations, pickles, ``copy``, TorchScript,
``torch.library``'s schemas and fx's generated code see what they would without devshim.
"""

from __future__ import annotations

from devshim import record, runtime
from devshim.patching import CONSTRUCTOR, REDIRECT, Patch, wraps

__all__ = ["plan", "POLICIES", "configure", "redirected_object", "as_written", "built_from_request"]

POLICIES = ("redirect", "redirect-indexed", "keep")
redirect_objects = False  # True under "redirect" and "redirect-indexed"
redirect_indexless = False  # True under "redirect": "cuda" without an index is built as used


# What each argument tuple built: (device object, the request it came from or None when it was
# not redirected, the device used). Device objects are immutable and what a "cuda"/"mps" request
# or a bare index gives depends only on the activation's policy and hardware (not on the cpu:-1
# override, which concerns "cpu"), so entries hold until configure() empties the cache at the
# next activation. Keyword calls, and CUDA indexes above 0 (whose existence follows the size of
# a distributed job: runtime.masquerade_device_count), are not cached.
_made: dict = {}
# The one object per device used that redirected requests build (str(object) -> object): so a
# device object tells whether it came from a "cuda" request (built_from_request).
_canonical: dict = {}


def configure(policy: str) -> None:
    """Sets the device-object policy (one of POLICIES); empties the cache of built objects."""
    global redirect_objects, redirect_indexless
    redirect_objects = policy in ("redirect", "redirect-indexed")
    redirect_indexless = policy == "redirect"
    _made.clear()
    _canonical.clear()


def _device_count(kind: str) -> int:
    """How many devices of ``kind`` the program sees: torch.cuda's device_count() while
    masquerading (runtime.masquerade_device_count); the real CUDA count when the device used is
    CUDA; one MPS device."""
    if kind == "mps":
        return 1
    if runtime.masquerading:
        return runtime.masquerade_device_count()
    return runtime.hardware.cuda_device_count


def _built_as_used(device) -> bool:
    """Whether the policy builds ``device`` (of a redirected type) as the device used: one with
    an index that exists on the hardware the program sees, or with no index under ``redirect``.
    An index beyond the devices seen stays as written: no tensor is ever there."""
    index = device.index
    if index is None:
        return redirect_indexless
    return index < _device_count(device.type)


_REDIRECTED_TYPES = ("cuda", "mps")


_as_written = None  # torch's own constructor of device objects, while the patch is installed


def as_written(*args):
    """``torch.device(*args)`` as torch builds it, whatever the policy."""
    import torch

    return _as_written(torch.device, args, {}) if _as_written is not None else torch.device(*args)


def redirected_object(device):
    """(object, used) when the policy builds ``device`` (a torch.device) as the device used, else
    None (the object stands as written). Records nothing."""
    if not (redirect_objects and device.type in _REDIRECTED_TYPES and _built_as_used(device)):
        return None
    used = runtime.redirect(device)
    if used is None:
        return None
    built = as_written(used)
    if built.type == "mps" and built.index is None:
        built = as_written("mps", 0)  # what an MPS tensor's .device is
    return _canonical.setdefault(str(built), built), used


def built_from_request(device) -> bool:
    """Whether ``device`` is an object the policy built as the device used from a "cuda" or "mps"
    request (``torch.device("cuda")`` under ``redirect``), rather than one the program asked for
    as it is (``torch.device("cpu")``), though both equal ``device(type='cpu')``."""
    return _canonical.get(str(device)) is device


def _device_new(original_new):
    """``torch.device.__new__``: builds torch's own device objects; applies the policy."""
    global _as_written
    _as_written = original_new

    def __new__(cls, *args, **kwargs):
        if not kwargs:
            try:
                made = _made[args]
            except (KeyError, TypeError):  # new, or an unhashable argument
                pass
            else:
                if made[1] is not None:
                    record.hit("torch.device", made[1], made[2])
                return made[0]
        if (len(args) == 1 and not kwargs and type(args[0]) is int and args[0] >= 0
                and runtime.masquerading):
            device = original_new(cls, ("cuda", args[0]), {})
        else:
            device = original_new(cls, args, kwargs)
        made = (device, None, None)
        found = redirected_object(device)
        if found is not None:
            record.hit("torch.device", device, found[1])
            made = (found[0], device, found[1])
        # A CUDA index above 0 exists or not by the job's size (_device_count), which a launcher
        # may set later: not cached.
        if (not kwargs and not any(type(a) is bool for a in args)
                and not (device.type == "cuda" and device.index)):
            try:
                _made[args] = made
            except TypeError:
                pass
        return made[0]

    return __new__


def _parse_to(original):
    """``torch._C._nn._parse_to(*args, **kwargs)`` -> (device, dtype, non_blocking, format): a
    bare index (first, or ``device=``) is ``torch.device(index)``, and the device parsed is the
    object ``torch.device`` would build for it (as_written, or redirected_object's)."""
    import torch

    @wraps(original)
    def _parse_to(*args, **kwargs):
        if runtime.masquerading:
            if args and type(args[0]) is int:
                args = (torch.device(args[0]), *args[1:])
            if type(kwargs.get("device")) is int:
                kwargs["device"] = torch.device(kwargs["device"])
        parsed = original(*args, **kwargs)
        device = parsed[0]
        found = redirected_object(device) if device is not None else None
        if found is None:
            return parsed
        record.hit("torch.device", device, found[1])
        return (found[0], *parsed[1:])

    return _parse_to


def plan(torch):
    patches = [Patch(torch.device, "__new__", _device_new, ("torch.device",), when=REDIRECT,
                     target=CONSTRUCTOR)]
    nn = getattr(torch._C, "_nn", None)
    if callable(getattr(nn, "_parse_to", None)):
        patches.append(Patch(nn, "_parse_to", _parse_to, ("torch._C._nn._parse_to",)))
    return patches
