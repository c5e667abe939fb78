"""Patch specifications and the one place that sets and restores torch attributes.

Each module of devshim that patches torch describes its patches as ``Patch`` values (what to
replace, how to build the replacement from the original, the public API names it carries, and
when it applies); devshim/patches.py gathers them. Keeping the description apart from applying it
lets ``devshim.carried_apis()`` list what the shim carries without changing torch.

Contracts:
- ``Patch.make(original)`` is called once per activation with the attribute's current value, so
  every replacement closes over its own original (no loop-variable capture).
- ``install`` remembers (owner, name, original, owned) of what it set; ``restore_all`` puts back
  exactly what was there — re-setting an attribute the owner defined itself, deleting one it only
  inherited or did not have — in reverse order.
- A CONSTRUCTOR patch replaces the constructor of one of torch's C types in place
  (devshim/native.py): the type object stays torch's, ``make`` gets the type's own C constructor
  (``original_new(cls, args, kwargs)``) and returns its ``__new__``. ``installed()`` lists it as
  (type, "__new__", the type's own ``__new__``, the replacement).
- ``wraps(original)(replacement)`` (functools.wraps) keeps the original's name, docstring and
  ``inspect.signature``; replacement classes get a ``__signature__`` copied from the original
  where it has one (see ``copy_signature``).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import threading
from typing import Any, Callable

from devshim import native
from devshim.log import logger

__all__ = ["Patch", "install", "install_or_log", "restore_all", "installed", "wraps",
           "copy_signature", "MISSING", "REDIRECT", "MASQUERADE", "CARRIES", "RAISES", "ATTRIBUTE",
           "CONSTRUCTOR"]

MISSING = object()

# When a patch applies:
REDIRECT = "redirect"  # whenever the shim redirects (mode "redirect")
MASQUERADE = "masquerade"  # only when the device used is not CUDA (torch.cuda answers for it)

# What a patch does, for carried_apis():
CARRIES = "carries"
RAISES = "raises"

# What a patch replaces:
ATTRIBUTE = "attribute"  # owner.<name>
CONSTRUCTOR = "constructor"  # the constructor of the C type ``owner`` (name "__new__"), in place


@dataclasses.dataclass(frozen=True)
class Patch:
    """Replace ``owner.<name>`` with ``make(original)``; carries the public names ``apis``.

    ``when``: REDIRECT (whenever the shim redirects) or MASQUERADE (only while torch.cuda answers
    for a device that is not CUDA). ``kind``: CARRIES, or RAISES for a NotImplementedError.
    ``target``: ATTRIBUTE, or CONSTRUCTOR for a C type's constructor replaced in place.
    ``calls_original``: whether the replacement calls what it replaces (a wrapper, which torch's
    machinery may treat as the original: devshim/machinery.py) or answers instead of it; None
    means "when == REDIRECT" (the policy's wrappers call torch; the masquerade answers for it).
    """

    owner: Any
    name: str
    make: Callable[[Any], Any]
    apis: tuple[str, ...]
    when: str = REDIRECT
    kind: str = CARRIES
    target: str = ATTRIBUTE
    calls_original: bool | None = None

    @property
    def wraps_original(self) -> bool:
        return self.when == REDIRECT if self.calls_original is None else self.calls_original


_lock = threading.RLock()
# (owner, name, original, owned, new); for a CONSTRUCTOR patch ``owned`` is native's handle.
_installed: list[tuple[Any, str, Any, Any, Any]] = []


wraps = functools.wraps  # (C method descriptors too: missing attributes are skipped)


def unpatched(fn):
    """torch's own function behind a patch of this module (its ``__wrapped__``), else ``fn``: for
    code that runs while the shim is active and must not see the patch."""
    return getattr(fn, "__wrapped__", fn)


def copy_signature(cls, original):
    """Gives the replacement class ``cls`` the original's signature when it has one."""
    try:
        cls.__signature__ = inspect.signature(original)
    except (TypeError, ValueError):
        pass
    return cls


def install(patch: Patch) -> None:
    """Replaces ``patch.owner.<name>`` with ``patch.make(original)``; remembers the original."""
    with _lock:
        owner, name = patch.owner, patch.name
        if patch.target == CONSTRUCTOR:
            handle = native.override_new(owner, patch.make)
            _installed.append((owner, name, handle.entry, handle, handle.replacement))
            logger.debug("patched the constructor of %s (%s)", owner.__qualname__,
                         ", ".join(patch.apis))
            return
        original = getattr(owner, name, MISSING)
        owned = isinstance(owner, type) and name in vars(owner) or not isinstance(owner, type)
        if original is MISSING:
            owned = False
        replacement = patch.make(None if original is MISSING else original)
        setattr(owner, name, replacement)
        _installed.append((owner, name, original, owned, replacement))
        logger.debug("patched %s.%s (%s)", getattr(owner, "__name__", owner), name,
                     ", ".join(patch.apis))


def install_or_log(patch: Patch) -> bool:
    """``install(patch)``; a failure (an attribute another version of the library lacks or holds
    differently) is logged as an error naming the patch's APIs and answered False: one attribute
    must not stop the program."""
    try:
        install(patch)
    except Exception as e:
        logger.error("could not patch %s.%s (%s): %s: %s",
                     getattr(patch.owner, "__qualname__", getattr(patch.owner, "__name__", "?")),
                     patch.name, ", ".join(patch.apis), type(e).__name__, e)
        return False
    return True


def restore_all() -> None:
    """Undoes every ``install``, last first."""
    with _lock:
        while _installed:
            owner, name, original, owned, _ = _installed.pop()
            if isinstance(owned, native.Handle):
                native.restore_new(owned)
            elif original is MISSING or not owned:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
                if original is not MISSING and getattr(owner, name, MISSING) is not original:
                    setattr(owner, name, original)
            else:
                setattr(owner, name, original)


def installed() -> list[tuple[Any, str, Any, Any]]:
    """(owner, name, original, replacement) of every attribute patched now, in order."""
    with _lock:
        return [(o, n, orig, new) for o, n, orig, _, new in _installed]
