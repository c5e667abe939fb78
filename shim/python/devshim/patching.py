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

from devshim.log import logger

__all__ = ["Patch", "install", "restore_all", "installed", "wraps", "copy_signature", "MISSING",
           "REDIRECT", "MASQUERADE", "CARRIES", "RAISES"]

MISSING = object()

# When a patch applies:
REDIRECT = "redirect"  # whenever the shim redirects (mode "redirect")
MASQUERADE = "masquerade"  # only when the device used is not CUDA (torch.cuda answers for it)

# What a patch does, for carried_apis():
CARRIES = "carries"
RAISES = "raises"


@dataclasses.dataclass(frozen=True)
class Patch:
    """Replace ``owner.<name>`` with ``make(original)``; carries the public names ``apis``.

    ``when``: REDIRECT (whenever the shim redirects) or MASQUERADE (only while torch.cuda answers
    for a device that is not CUDA). ``kind``: CARRIES, or RAISES for a NotImplementedError.
    """

    owner: Any
    name: str
    make: Callable[[Any], Any]
    apis: tuple[str, ...]
    when: str = REDIRECT
    kind: str = CARRIES


_lock = threading.RLock()
_installed: list[tuple[Any, str, Any, bool, Any]] = []  # (owner, name, original, owned, new)


wraps = functools.wraps  # (C method descriptors too: missing attributes are skipped)


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
        original = getattr(owner, name, MISSING)
        owned = isinstance(owner, type) and name in vars(owner) or not isinstance(owner, type)
        if original is MISSING:
            owned = False
        replacement = patch.make(None if original is MISSING else original)
        setattr(owner, name, replacement)
        _installed.append((owner, name, original, owned, replacement))
        logger.debug("patched %s.%s (%s)", getattr(owner, "__name__", owner), name,
                     ", ".join(patch.apis))


def restore_all() -> None:
    """Undoes every ``install``, last first."""
    with _lock:
        while _installed:
            owner, name, original, owned, _ = _installed.pop()
            if original is MISSING or not owned:
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
