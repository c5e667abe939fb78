"""``torch.load(map_location=...)`` (also reached as ``torch.serialization.load``), and
``torch.jit.load(map_location=...)`` for TorchScript archives.

What the caller gave as ``map_location``:

- a string or ``torch.device``: goes through the policy (``"cuda:1"`` -> the device used);
- a dict ``{saved location: wanted location}``: each wanted location goes through the policy;
  saved locations the dict does not name are treated as with no map_location;
- a callable: left alone — the caller decided;
- nothing: a storage saved on CUDA is restored on the device a ``cuda`` request lands on (so a
  checkpoint saved from CUDA tensors loads on a CPU-only machine); any other storage is restored
  where torch would restore it.

Dicts and "nothing" become a ``RestoreMap``, a dict whose ``get`` redirects (torch takes a callable
for storages only); a ``*.safetensors`` path with nothing is left with nothing (torch hands it to
safetensors, which refuses any other map_location). One ``torch.load`` call that rewrote anything
is recorded once, with requested = the caller's map_location when it was a string or device, else
the first saved location that was rewritten (e.g. "cuda:0").

``torch.jit.load`` takes a string or ``torch.device`` only (it goes through the policy). Without
one, an archive with tensors saved on CUDA fails to load where CUDA is missing (torch raises
before it builds anything); the shim then loads it again, from the same position of the same file,
with the device a ``cuda`` request lands on: every tensor of it goes there (recorded as requested
"cuda"). An archive that loads as it is is left as torch loads it.
"""

from __future__ import annotations

import os

from devshim import record, runtime, scripted
from devshim.patching import Patch, wraps

__all__ = ["plan", "RestoreMap"]


class RestoreMap(dict):
    """The map_location the shim gives torch.load: saved CUDA locations (and those the caller's
    dict names) are redirected.

    A dict, not a callable: torch asks a dict for the location of every storage
    (``get(location, location)``, a string) and of every tensor subclass rebuilt without storage
    (``get(device, device)``, a ``torch.device``: torch_geometric's ``Index``), where it refuses a
    callable ("Callable map_location not supported with _rebuild_wrapper_subclass"). Appends
    (saved location, used) to ``rewritten`` for every location it moved elsewhere.
    """

    def __init__(self, mapping, rewritten):
        super().__init__(mapping or {})
        self.rewritten = rewritten

    def get(self, location, default=None):
        named = dict.__contains__(self, location)
        wanted = dict.get(self, location, location)
        used = runtime.redirect(wanted) if named or str(wanted).startswith("cuda") else None
        if used is None:
            return wanted if named else default
        self.rewritten.append((str(location), used))
        return used


def _is_safetensors_path(f) -> bool:
    """torch.load reads these with safetensors, which takes no dict or callable map_location
    (and restores onto the CPU: nothing saved on CUDA to redirect)."""
    try:
        return str(os.fspath(f)).endswith(".safetensors")
    except TypeError:
        return False


def _load(original):
    @wraps(original)
    def load(f, map_location=None, *args, **kwargs):
        rewritten = []
        requested = None
        if map_location is None:
            if not _is_safetensors_path(f):
                map_location = RestoreMap(None, rewritten)
        elif isinstance(map_location, dict):
            map_location = RestoreMap(dict(map_location), rewritten)
        elif isinstance(map_location, str) or type(map_location).__name__ == "device":
            used = runtime.redirect(map_location)
            if used is not None:
                requested = map_location
                rewritten.append((map_location, used))
                map_location = used
        result = original(f, map_location, *args, **kwargs)
        if rewritten:
            first, used = rewritten[0]
            record.hit("torch.load", requested if requested is not None else first, used)
        return result

    return load


# What torch.jit.load raises for an archive with CUDA tensors where CUDA is missing: a CUDA build
# without a GPU (RuntimeError; torch 2.14's without a driver: "Found no NVIDIA driver on your
# system"), a CPU build (NotImplementedError: no CUDA kernel for the storage).
_CUDA_ARCHIVE = ("on a CUDA device", "support for cuda devices", "from the 'CUDA' backend",
                 "Found no NVIDIA driver")


def _jit_load(original):
    """``torch.jit.load``: the archive's tensors go where ``map_location`` (redirected) says, or
    where a "cuda" request lands when the archive was saved on CUDA; the devices written in its
    code are rewritten as in any scripted code (devshim/scripted.py)."""

    @wraps(original)
    def load(f, map_location=None, *args, **kwargs):
        module = _jit_load_placed(original, f, map_location, args, kwargs)
        scripted.rewrite_module(module)
        return module

    return load


def _jit_load_placed(original, f, map_location, args, kwargs):
    if map_location is not None:
        used = runtime.redirect(map_location)
        if used is not None:
            record.hit("torch.jit.load", map_location, used, depth=3)
            map_location = used
        return original(f, map_location, *args, **kwargs)
    start = f.tell() if hasattr(f, "seek") and hasattr(f, "tell") else None
    try:
        return original(f, None, *args, **kwargs)
    except (RuntimeError, NotImplementedError) as e:
        used = runtime.redirect("cuda")
        if used is None or not any(text in str(e) for text in _CUDA_ARCHIVE) or \
                (start is None and not isinstance(f, (str, bytes)) and
                 not hasattr(f, "__fspath__")):
            raise
    if start is not None:
        f.seek(start)
    record.hit("torch.jit.load", "cuda", used, depth=3)
    return original(f, used, *args, **kwargs)


def plan(torch):
    return [
        Patch(torch, "load", _load, ("torch.load",)),
        Patch(torch.serialization, "load", _load, ("torch.load",)),
        Patch(torch.jit, "load", _jit_load, ("torch.jit.load",)),
        Patch(torch.jit._serialization, "load", _jit_load, ("torch.jit.load",)),
    ]
