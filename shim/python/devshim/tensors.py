"""Where tensors and modules are made and moved: factories, ``Tensor.to/.cuda/.new_*``,
``nn.Module.to/.cuda/.to_empty``, and storages' ``.to/.cuda``.

Factories are found from torch itself (``carried_factories``): the public callables of ``torch``
whose documentation lists a ``device (torch.device)`` argument; ``_EXTRA_FACTORIES`` adds the few
documented in other words (``scalar_tensor``, ``normal``, ``fft.fftfreq``, ...). A factory's
``device=`` goes through the policy; a factory called without one gets ``runtime.default_device``
(an accelerator, when there is one), except the ``*_like`` functions, which keep their input's
device. While the device used is not CUDA, ``pin_memory=True`` is dropped (pinned memory exists
for CUDA copies) and the result is marked as pinned (devshim/pinning.py).

Under Dynamo (torch.compile, torch.export) a wrapper is kept in the graph as the function it
replaced and run as it is while tracing (devshim/machinery.py). Where Dynamo would trace through
a factory or ``.to`` instead, it traces their ``_torchdynamo_inline`` twin (Dynamo's own
attribute for a function that stands for another): the same redirection without the count and
the placed tensors, whose frames and weak references would break the graph. The twin costs the
eager call nothing.

The hot path of every wrapper here is a dict lookup in ``runtime.cache`` and, only when the
request is rewritten, the record's count — inlined in the factories and ``.to`` (a frame, an
int-keyed dict lookup, three identity checks; see record.SiteCache). The wrappers call the
ORIGINAL functions they were made from, so a ``.cuda()`` is recorded once, as ``.cuda``, and not
again as the ``.to`` it becomes.
"""

from __future__ import annotations

import sys

from devshim import devices, placed, record, runtime
from devshim.patching import Patch, wraps
from devshim.pinning import PINNED, mark_pinned

__all__ = ["carried_factories", "plan"]


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


def _factory(api, inject_default, takes_input=False):
    """A factory wrapper maker: ``device=`` redirected; no device -> the default device.

    ``takes_input``: the factory's first argument is a tensor (``*_like``). When that argument is
    not a ``Tensor`` and overrides ``__torch_function__`` (tensordict's ``TensorDict``, a Tensor
    subclass), the wrapper hands the call to it as torch's own Python functions do
    (``handle_torch_function`` with the wrapper as the function): its handler receives the
    function the program's ``torch.zeros_like`` is, the wrapper, which tables such as
    ``HANDLED_FUNCTIONS`` built at import hold. Called from C, the original would hand it the
    builtin, which those tables do not hold (``Multiple dispatch failed ... returned
    NotImplemented``). The handler's own calls come back here with that argument's override
    disabled and are redirected then."""

    def make(original):
        cache = runtime.cache
        resolve = runtime.resolve_uncached
        hit = record.hit
        sites = record.site_cache(api)
        fast_get, count = sites.fast.get, sites.count
        getframe = sys._getframe
        default = runtime.default_device if inject_default else None
        drop_pinning = runtime.masquerading
        track = placed.wanted()
        used_device = runtime.used

        if takes_input:
            import torch

            tensor_type = torch.Tensor
            overridden = torch._C._has_torch_function_unary
            handle = torch.overrides.handle_torch_function

            def overriding(args, kwargs):
                """The input when it is no Tensor and overrides __torch_function__, else None."""
                x = args[0] if args else kwargs.get("input")
                return x if type(x) is not tensor_type and overridden(x) else None

        @wraps(original)
        def factory(*args, **kwargs):
            if takes_input and (x := overriding(args, kwargs)) is not None:
                return handle(factory, (x,), *args, **kwargs)
            device = kwargs.get("device")
            placing = False
            if device is not None:
                try:
                    used = cache[device]
                except (KeyError, TypeError):
                    used = resolve(device)
                if used is not None:
                    kwargs["device"] = used
                    placing = track
                    # record.hit, inlined (see record.SiteCache)
                    try:
                        f = getframe(1)
                    except ValueError:  # called from C with no Python caller
                        f = None
                    if (f is not None and (e := fast_get(f.f_lasti)) is not None
                            and e[0] is f.f_code and e[1] == device and e[2] is used):
                        e[3][0] += 1
                    else:
                        count(f, device, used)
            elif default is not None:
                kwargs["device"] = default
                hit(api, None, default)
            if drop_pinning and kwargs.get("pin_memory"):
                kwargs["pin_memory"] = False
                hit(api, PINNED, used_device)
                return mark_pinned(original(*args, **kwargs))
            if placing:
                result = original(*args, **kwargs)
                placed.track(result)
                return result
            return original(*args, **kwargs)

        def traced(*args, **kwargs):
            if takes_input and (x := overriding(args, kwargs)) is not None:
                return handle(factory, (x,), *args, **kwargs)
            device = kwargs.get("device")
            if device is not None:
                used = runtime.redirect(device)
                if used is not None:
                    kwargs["device"] = used
            elif default is not None:
                kwargs["device"] = default
            return original(*args, **kwargs)

        factory._torchdynamo_inline = traced
        return factory

    return make


def _to(api):
    """``Tensor.to`` / ``Module.to``: a device given first or as ``device=`` is redirected."""

    def make(original):
        cache = runtime.cache
        resolve = runtime.resolve_uncached
        sites = record.site_cache(api)
        fast_get, slow_count = sites.fast.get, sites.count
        getframe = sys._getframe

        def count(device, used):
            # record.hit, inlined (see record.SiteCache); the program's frame is 2 up.
            try:
                f = getframe(2)
            except ValueError:  # called from C with no Python caller
                f = None
            if (f is not None and (e := fast_get(f.f_lasti)) is not None
                    and e[0] is f.f_code and e[1] == device and e[2] is used):
                e[3][0] += 1
            else:
                slow_count(f, device, used)

        track = placed.track_module if api == "torch.nn.Module.to" else placed.track
        counting = placed.wanted()
        device_class = runtime.device_class

        @wraps(original)
        def to(self, *args, **kwargs):
            placing = False
            if args:
                first = args[0]
                kind = type(first)
                if kind is str or kind is int or kind is device_class:
                    try:
                        used = cache[first]
                    except (KeyError, TypeError):
                        used = resolve(first)
                    if used is not None:
                        args = (used,) + args[1:]
                        count(first, used)
                        placing = counting
            if kwargs:
                device = kwargs.get("device")
                if device is not None:
                    try:
                        used = cache[device]
                    except (KeyError, TypeError):
                        used = resolve(device)
                    if used is not None:
                        kwargs["device"] = used
                        count(device, used)
                        placing = counting
            if placing:
                result = original(self, *args, **kwargs)
                track(result)
                return result
            return original(self, *args, **kwargs)

        def traced(self, *args, **kwargs):
            if args and type(args[0]) in (str, int, device_class):
                used = runtime.redirect(args[0])
                if used is not None:
                    args = (used,) + args[1:]
            device = kwargs.get("device")
            if device is not None:
                used = runtime.redirect(device)
                if used is not None:
                    kwargs["device"] = used
            return original(self, *args, **kwargs)

        to._torchdynamo_inline = traced
        return to

    return make


def _cuda_request(device):
    """What ``.cuda(device)`` asks for, as a hashable request."""
    if device is None:
        return "cuda"
    if type(device) is int:
        return f"cuda:{device}"
    if (devices.redirect_objects and getattr(device, "type", None) == runtime.used_type
            and runtime.masquerading and not isinstance(device, str)):
        # A device object built from a "cuda" request under TORCHDEVICE_DEVICE_OBJECTS=redirect
        # is already the device used; torch's own .cuda() would refuse it.
        return "cuda" if device.index is None else f"cuda:{device.index}"
    return device


def _tensor_cuda(tensor_to, preserve_format):
    def make(original):
        resolve = runtime.redirect
        hit = record.hit
        counting = placed.wanted()

        @wraps(original)
        def cuda(self, device=None, non_blocking=False, memory_format=preserve_format):
            requested = _cuda_request(device)
            used = resolve(requested)
            if used is None:
                return original(self, device, non_blocking, memory_format=memory_format)
            hit("torch.Tensor.cuda", requested, used)
            result = tensor_to(self, used, non_blocking=non_blocking, memory_format=memory_format)
            if counting and not record.compiling():
                placed.track(result)
            return result

        return cuda

    return make


def _module_cuda(module_to):
    def make(original):
        resolve = runtime.redirect
        hit = record.hit
        counting = placed.wanted()

        @wraps(original)
        def cuda(self, device=None):
            requested = _cuda_request(device)
            used = resolve(requested)
            if used is None:
                return original(self, device)
            hit("torch.nn.Module.cuda", requested, used)
            result = module_to(self, used)
            if counting and not record.compiling():
                placed.track_module(self)
            return result

        return cuda

    return make


def _module_to_empty(original):
    resolve = runtime.redirect
    hit = record.hit

    @wraps(original)
    def to_empty(self, *, device, recurse=True):
        used = resolve(device) if device is not None else None
        if used is not None:
            hit("torch.nn.Module.to_empty", device, used)
            device = used
        return original(self, device=device, recurse=recurse)

    return to_empty


def _storage_to(api):
    def make(original):
        resolve = runtime.redirect
        hit = record.hit

        @wraps(original)
        def to(self, *, device, non_blocking=False):
            used = resolve(device)
            if used is not None:
                hit(api, device, used)
                device = used
            return original(self, device=device, non_blocking=non_blocking)

        return to

    return make


def _storage_cuda(api, storage_to):
    def make(original):
        resolve = runtime.redirect
        hit = record.hit

        @wraps(original)
        def cuda(self, device=None, non_blocking=False):
            requested = _cuda_request(device)
            used = resolve(requested)
            if used is None:
                return original(self, device, non_blocking)
            hit(api, requested, used)
            return storage_to(self, device=used, non_blocking=non_blocking)

        return cuda

    return make


_NEW_METHODS = ("new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor",
                "new_zeros")


# Factories that take a device but whose documentation does not say so in the usual words:
# (module below torch, name, whether a call without a device gets the default device).
# torch.normal(mean_tensor, std_tensor) takes no device, so it never gets one.
_EXTRA_FACTORIES = (("", "scalar_tensor", True), ("", "normal", False), ("fft", "fftfreq", True),
                    ("fft", "rfftfreq", True), ("nested", "nested_tensor", True))


def plan(torch):
    """The patches of this module, built from torch's current (unpatched) attributes."""
    patches = []
    for name in carried_factories(torch):
        like = name.endswith("_like")
        patches.append(Patch(torch, name, _factory(f"torch.{name}", not like, like),
                             (f"torch.{name}",)))
    for path, name, inject in _EXTRA_FACTORIES:
        owner = getattr(torch, path, None) if path else torch
        if owner is not None and callable(getattr(owner, name, None)):
            api = f"torch.{path}.{name}" if path else f"torch.{name}"
            patches.append(Patch(owner, name, _factory(api, inject), (api,)))
    for name in _NEW_METHODS:
        if hasattr(torch.Tensor, name):
            api = f"torch.Tensor.{name}"
            patches.append(Patch(torch.Tensor, name, _factory(api, False), (api,)))
    tensor_to = torch._C.TensorBase.to
    module_to = torch.nn.Module.to
    patches += [
        Patch(torch.Tensor, "to", _to("torch.Tensor.to"), ("torch.Tensor.to",)),
        Patch(torch.Tensor, "cuda", _tensor_cuda(tensor_to, torch.preserve_format),
              ("torch.Tensor.cuda",)),
        Patch(torch.nn.Module, "to", _to("torch.nn.Module.to"), ("torch.nn.Module.to",)),
        Patch(torch.nn.Module, "cuda", _module_cuda(module_to), ("torch.nn.Module.cuda",)),
        Patch(torch.nn.Module, "to_empty", _module_to_empty, ("torch.nn.Module.to_empty",)),
    ]
    # Storages (a map_location callable may call storage.cuda()): UntypedStorage's methods are
    # _StorageBase's; TypedStorage has its own.
    for cls, public in ((torch.storage._StorageBase, "torch.UntypedStorage"),
                        (torch.TypedStorage, "torch.TypedStorage")):
        storage_to = cls.to
        patches += [
            Patch(cls, "to", _storage_to(f"{public}.to"), (f"{public}.to",)),
            Patch(cls, "cuda", _storage_cuda(f"{public}.cuda", storage_to), (f"{public}.cuda",)),
        ]
    return patches
