"""devshim: run CUDA-written PyTorch code on the hardware that is present.

``activate()`` arranges for torch to be patched as soon as it is imported (at once if it already
is), without importing torch itself. The redirection policy is devshim/policy.py; the patches that
apply it are devshim/patches.py. ``status()`` tells what is active so that test suites and the
runner can check it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import threading

__all__ = ["activate", "deactivate", "is_active", "requested_by_environment", "status", "__version__"]
__version__ = "0.1.0"

_lock = threading.RLock()
_active = False
_torch_patched = False
_finder = None


class _TorchImportHook(importlib.abc.MetaPathFinder):
    """Wraps the loader of ``torch`` so the shim is applied right after torch finishes importing."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec

        class _Loader(importlib.abc.Loader):
            """Delegates to torch's own loader; runs the shim once torch's module has executed."""

            def __getattr__(self, name):
                return getattr(loader, name)

            def create_module(self, s):
                return loader.create_module(s)

            def exec_module(self, module):
                loader.exec_module(module)
                _on_torch_imported(module)

        spec.loader = _Loader()
        return spec


def _on_torch_imported(torch_module):
    global _torch_patched
    with _lock:
        if not _active or _torch_patched:
            return
        from devshim import patches

        patches.apply(torch_module)
        _torch_patched = True


def activate():
    """Activate the shim. Idempotent; never imports torch."""
    global _active, _finder
    with _lock:
        if _active:
            return
        _active = True
        if "torch" in sys.modules:
            _on_torch_imported(sys.modules["torch"])
        else:
            _finder = _TorchImportHook()
            sys.meta_path.insert(0, _finder)


def deactivate():
    """Undo activate(): remove the import hook. For tests."""
    global _active, _finder, _torch_patched
    with _lock:
        if _finder is not None and _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        _finder = None
        if _torch_patched:
            from devshim import patches

            patches.remove()
        _active = False
        _torch_patched = False


def requested_by_environment():
    """True when ACTIVATE_TORCH_DEVICE asks for the shim (1, true, yes, on; any case)."""
    return os.environ.get("ACTIVATE_TORCH_DEVICE", "").strip().lower() in ("1", "true", "yes", "on")


def is_active():
    return _active


def status():
    """What is active, as a dict (stable keys, for tools)."""
    return {
        "version": __version__,
        "active": _active,
        "torch_patched": _torch_patched,
        "activated_by_env": requested_by_environment(),
    }
