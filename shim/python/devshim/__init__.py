"""devshim: run CUDA-written PyTorch code on the hardware that is present.

``activate()`` arranges for torch to be patched as soon as it is imported (at once if it already
is), without importing torch itself. The redirection policy is devshim/policy.py; the patches that
apply it are listed in devshim/patches.py. ``status()`` tells what is active so that test suites
and the runner can check it; ``carried_apis()`` and ``raising_apis()`` list what the shim carries
(they import torch). ``python -m devshim`` prints both (devshim/__main__.py).
"""

# Activation runs in every process the runner starts, most of which may never import torch: this
# module imports only what the interpreter has already loaded at start-up (os, sys, _thread) so
# that activating costs no module loads (tests/shim/test_activation.py checks the set). In
# particular no importlib.abc (it pulls in importlib.resources, pathlib, tempfile, re, ...), no
# threading, logging, json or typing: everything else is imported when torch is.
import _thread
import os
import sys

__all__ = ["activate", "deactivate", "is_active", "requested_by_environment", "status",
           "carried_apis", "raising_apis", "after_import", "__version__"]
__version__ = "0.3.0"

_lock = _thread.RLock()
_active = False
_torch_patched = False
_finder = None
_after_import = {}  # module name -> callbacks to run once, right after that module has executed


class _ImportHook:
    """A meta-path finder (the protocol needs only ``find_spec``) for the names of
    ``_after_import``: ``torch`` (the shim is applied right after torch's module has executed)
    and the modules of torch whose tables the patches must reach when they are loaded later
    (devshim/machinery.py). Finds the spec with the finders after it and wraps its loader; every
    other name is left to the others (None).
    """

    def find_spec(self, fullname, path, target=None):
        if fullname not in _after_import:
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
        spec.loader = _PatchingLoader(loader, fullname)
        return spec

    def invalidate_caches(self):
        """Nothing cached here (importlib.invalidate_caches() calls it on every finder)."""


class _PatchingLoader:
    """Delegates to the module's own loader (any other attribute too, e.g. get_resource_reader);
    runs the module's ``_after_import`` callbacks once it has executed."""

    def __init__(self, loader, name):
        self._loader = loader
        self._name = name

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        with _lock:
            callbacks = _after_import.pop(self._name, ())
        for callback in callbacks:
            callback(module)


def after_import(name, callback):
    """Runs ``callback(module)`` once the module ``name`` has been imported: now if it is (fully)
    imported, else right after it is. Callbacks are dropped by ``deactivate()``."""
    with _lock:
        module = sys.modules.get(name)
        spec = getattr(module, "__spec__", None)
        if module is None or getattr(spec, "_initializing", False):
            _after_import.setdefault(name, []).append(callback)
            _install_finder()
            return
    callback(module)


def _install_finder():
    global _finder
    if _finder is None:
        _finder = _ImportHook()
        sys.meta_path.insert(0, _finder)


def _on_torch_imported(torch_module):
    global _torch_patched
    with _lock:
        if not _active or _torch_patched:
            return
        from devshim import patches

        patches.apply(torch_module)
        _torch_patched = True


def activate():
    """Activate the shim. Idempotent; never imports torch.

    Also sets PYTORCH_ENABLE_MPS_FALLBACK=1 unless it is set (torch reads it when it starts: MPS
    operators it lacks then run on the CPU), as the runner does for every process it starts.
    """
    global _active
    with _lock:
        if _active:
            return
        _active = True
        os.environ.setdefault("PYTORCH_ENABLE_MPS_FALLBACK", "1")
        if "torch" in sys.modules:
            _on_torch_imported(sys.modules["torch"])
        else:
            _after_import.setdefault("torch", []).append(_on_torch_imported)
            _install_finder()


def deactivate():
    """Undo activate(): remove the import hook and restore every patched torch attribute."""
    global _active, _finder, _torch_patched
    with _lock:
        if _finder is not None and _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        _finder = None
        _after_import.clear()
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
    """What is active, as a dict (stable keys, for tools). Never imports torch.

    Keys: version, active, torch_patched, activated_by_env; and, once torch is patched, what the
    shim decided: mode ("redirect" or "passthrough"), policy, hardware, cuda_lands_on,
    masquerading, allow_redirects, log_level, record_path, device_objects, patched_attributes
    (None or defaults before).
    """
    result = {
        "version": __version__,
        "active": _active,
        "torch_patched": _torch_patched,
        "activated_by_env": requested_by_environment(),
    }
    if "devshim.patches" in sys.modules:
        result.update(sys.modules["devshim.patches"].state())
    else:
        result.update({"mode": None, "policy": None, "hardware": None, "cuda_lands_on": None,
                       "masquerading": False, "allow_redirects": None, "log_level": None,
                       "record_path": None, "device_objects": None, "patched_attributes": 0})
    return result


def carried_apis():
    """Sorted public torch API names the shim patches or answers for (imports torch).

    Whatever this machine's hardware: on a CUDA machine some are left to torch (docs/shim.md).
    The names that raise NotImplementedError are in ``raising_apis()``, not here.
    """
    import torch

    from devshim import patches

    return patches.carried_apis(torch)


def raising_apis():
    """Sorted public torch API names that raise NotImplementedError naming the feature."""
    import torch

    from devshim import patches

    return patches.raising_apis(torch)
