"""Applies the redirection policy (devshim/policy.py) to torch, and takes it off again.

``apply(torch)`` reads the settings (devshim/config.py), probes the hardware with torch's own
functions, binds the policy (devshim/runtime.py) and installs the patches described by the
modules named for what they carry:

| module              | carries                                                             |
| ------------------- | ------------------------------------------------------------------- |
| tensors             | factories, Tensor.to/.cuda/.new_*, nn.Module.to/.cuda/.to_empty      |
| defaults            | set_default_device, ``with torch.device(...)``, torch.Generator     |
| devices             | torch.device(...) objects (TORCHDEVICE_DEVICE_OBJECTS), torch.device(0) |
| serialization       | torch.load(map_location=...), torch.jit.load                        |
| scripted            | devices written inside TorchScript code (compiled graphs rewritten) |
| amp                 | autocast (all three spellings), GradScaler (both)                   |
| legacy*             | torch.cuda.FloatTensor & co., Tensor.type, set_default_tensor_type  |
| cuda_masquerade*    | torch.cuda device queries, properties, memory, RNG, init            |
| accelerator*        | torch.accelerator.*, torch.get_device_module                        |
| streams*            | torch.cuda.Stream/Event/stream()/current_stream/..., record_stream; |
|                     | torch.Stream()/torch.Event() asked for CUDA                          |
| pinning*            | Tensor.pin_memory/is_pinned, DataLoader(pin_memory=True)            |
| optimizers*         | capturable=True optimizers on the device used                       |
| attention*          | sdpa_kernel naming CUDA-only kernels: the device used's own beside  |
| distributed*        | init_process_group/new_group/barrier (nccl -> gloo), DDP, DataParallel |
|                     | and nn.parallel's scatter/gather/replicate/comm on the one device    |
| unsupported*        | NotImplementedError for CUDA graphs & co.; torch.cuda.nvtx no-ops   |
| cudart*             | torch.cuda.cudart()/check_error, torch.cuda.profiler start/stop     |
| tunable*            | torch.cuda.tunable (TunableOp): its settings kept, nothing tuned    |
| cufft*              | torch.backends.cuda.cufft_plan_cache: an empty cache, its capacity  |

(*) only while masquerading: the device a "cuda" request lands on is not CUDA.

``torch.device`` and ``torch.Generator`` stay torch's own classes: their constructors are replaced
in place (devshim/native.py). Once everything is installed, torch's own tables keyed by function
identity (TorchScript's builtins, Dynamo's rules, torch.overrides') are told that each wrapper
stands for the function it replaced (devshim/machinery.py), so TorchScript, fx, torch.compile,
torch.export and ``__torch_function__`` handlers see what they would without devshim.

Modes: on a machine whose accelerator is CUDA, without TORCH_ALLOW_REDIRECTS, the mode is
"passthrough" and nothing is patched (CUDA code runs as written; the record is still written).
Otherwise the mode is "redirect"; with CUDA used (TORCH_ALLOW_REDIRECTS on a CUDA machine) the
policy is applied to device requests and torch.cuda's own functions are left alone.

``apply`` is idempotent and never raises for one attribute it cannot patch (it logs an ERROR and
goes on); ``remove()`` restores every attribute (devshim/patching.py).
"""

from __future__ import annotations

import atexit
import dataclasses
import importlib
import os
import sys
import threading
import types

from devshim import (
    accelerator,
    amp,
    attention,
    config,
    cuda_masquerade,
    cudart,
    cufft,
    defaults,
    devices,
    distributed,
    legacy,
    libraries,
    log,
    machinery,
    optimizers,
    patching,
    pinning,
    placed,
    record,
    runtime,
    scripted,
    serialization,
    streams,
    tensors,
    test_hooks,
    tunable,
    unsupported,
)
from devshim.log import logger
from devshim.patching import MASQUERADE, RAISES, REDIRECT

__all__ = ["apply", "remove", "plan", "carried_apis", "raising_apis", "carried_factories",
           "redirect", "state"]

carried_factories = tensors.carried_factories
redirect = runtime.redirect

_MODULES = (tensors, defaults, devices, serialization, scripted, amp, legacy, cuda_masquerade,
            accelerator, streams, pinning, optimizers, attention, distributed, unsupported, cudart,
            tunable, cufft)
_lock = threading.RLock()
_applied = False
_settings = config.Config()
_atexit_registered = False


def plan(torch):
    """Every patch devshim knows for this torch, whatever the hardware (see Patch.when).

    A module whose plan fails (another torch version) is logged at ERROR and left out. Each
    attribute gets one patch (see _one_per_attribute).
    """
    patches = []
    for module in _MODULES:
        try:
            patches.extend(module.plan(torch))
        except Exception as e:
            logger.error("%s: no patches (%s: %s)", module.__name__, type(e).__name__, e)
    patches = _one_per_attribute(patches)
    return patches + _submodule_aliases(torch, patches)


def _one_per_attribute(patches):
    """The patches with one per attribute: where two name the same one, the later is kept.

    Plans go from general to specific: the factories read from torch's docs come first, the
    patches that know one function by name after them. A torch whose docs start to describe a
    ``device`` parameter in the factories' words (torch 2.14's ``torch.normal`` and
    ``torch.set_default_device``) would otherwise get that function patched twice, the second
    wrapper over the first, and its specific handling lost under the generic one."""
    last = {(id(p.owner), p.name, p.target): i for i, p in enumerate(patches)}
    kept = []
    for i, p in enumerate(patches):
        if last[(id(p.owner), p.name, p.target)] == i:
            kept.append(p)
        else:
            logger.debug("%s: patched by name, not as a factory read from the docs",
                         ", ".join(p.apis))
    return kept


def _submodule_aliases(torch, patches):
    """The same patches for the submodules of torch.cuda that define a patched function
    (``torch.cuda.random.get_rng_state`` is ``torch.cuda.get_rng_state``): code that reaches a
    function through its own module (transformers' Trainer saves ``torch.cuda.random.
    get_rng_state()``) gets devshim's answer too. Functions only: a class's submodule keeps it
    (torch's own code there builds and checks its instances)."""
    aliases = []
    for patch in patches:
        if patch.owner is not torch.cuda or patch.target != patching.ATTRIBUTE:
            continue
        original = getattr(torch.cuda, patch.name, None)
        module = sys.modules.get(getattr(original, "__module__", None) or "")
        if (isinstance(original, types.FunctionType) and module is not None
                and module.__name__.startswith("torch.cuda.")
                and getattr(module, patch.name, None) is original):
            aliases.append(dataclasses.replace(patch, owner=module))
    return aliases


def _apis(torch, kind):
    names = set()
    for p in plan(torch):
        if (p.kind == RAISES) == (kind == RAISES):
            names.update(p.apis)
    if kind != RAISES:
        names.update(streams.METHOD_APIS)
    else:
        names.update(streams.RAISING_METHOD_APIS)
    return sorted(names)


def carried_apis(torch):
    """Sorted public torch API names the shim redirects or answers for (not the raising ones)."""
    return _apis(torch, "carries")


def raising_apis(torch):
    """Sorted public torch API names that raise NotImplementedError naming the feature."""
    return _apis(torch, RAISES)


def _write_record():
    path = _settings.record_path
    if path:
        record.write(path, runtime.policy, runtime.hardware)


def apply(torch):
    """Patches torch once; a second call does nothing."""
    global _applied, _settings, _atexit_registered
    with _lock:
        if _applied:
            return
        _settings = config.from_environ()
        log.configure(_settings.log_level, _settings.log_level_given)
        for problem in _settings.problems:
            logger.error("%s", problem)
        devices.configure(_settings.device_objects)
        hardware = runtime.probe_hardware(torch)
        runtime.configure(hardware, _settings.policy, _settings.allow_redirects, torch.device)
        record.set_internal_dirs(os.path.dirname(os.path.abspath(torch.__file__)))
        record.compiling = getattr(getattr(torch, "compiler", None), "is_compiling", bool)
        logger.debug("hardware %s, policy %s, mode %s, a 'cuda' request lands on %s",
                     hardware, runtime.policy, runtime.mode, runtime.used)
        if _settings.record_path:
            test_hooks.install()
            if not _atexit_registered:
                atexit.register(_write_record)
                _atexit_registered = True
        _applied = True
        if runtime.mode != "redirect":
            return
        # torch's DeviceContext (set_default_device, ``with torch.device(...)``) caches the set of
        # factory functions it gives a device to on first use: have it cache the originals.
        importlib.import_module("torch.utils._device")._device_constructors()
        if runtime.masquerading:
            cuda_masquerade.configure(torch, _backend_for(torch))
            placed.reset()
            streams.reset()
            tunable.reset()
            cufft.reset()
            record._first_hit_listeners[:] = [cuda_masquerade.note_first_use]
        wrapped, replaced = [], []  # (original, new): wrappers, replacements (Patch.wraps_original)
        for patch in plan(torch):
            if patch.when == REDIRECT or (patch.when == MASQUERADE and runtime.masquerading):
                if not patching.install_or_log(patch):
                    continue
                _, _, original, new = patching.installed()[-1]
                if original is not patching.MISSING:
                    (wrapped if patch.wraps_original else replaced).append((original, new))
        _hide_from_machinery(torch, wrapped, replaced)
        libraries.watch()


def _hide_from_machinery(torch, wrapped, replaced):
    """torch's own tables see each patched function as the one it replaced
    (devshim/machinery.py). ``wrapped``: (original, wrapper) of the patches that call what they
    replace; ``replaced``: (original, replacement) of those that answer instead of it."""
    pairs = wrapped + replaced
    try:
        machinery.sync_builtins(torch, pairs)
    except Exception as e:  # another torch version: TorchScript keeps its own view
        logger.error("TorchScript's builtin table: %s: %s", type(e).__name__, e)
    try:
        scripted.install_hooks(torch)
    except Exception as e:  # another torch version: scripted code runs as written
        logger.error("TorchScript's emit hooks: %s: %s", type(e).__name__, e)
    for patch in [*machinery.overrides_patches(torch, pairs),
                  *machinery.parameter_patches(torch, pairs)]:
        patching.install_or_log(patch)

    def on_dynamo(trace_rules):
        with _lock:
            if _applied and hasattr(trace_rules, "get_torch_obj_rule_map"):
                patching.install_or_log(
                    machinery.dynamo_rules_patch(trace_rules, wrapped, replaced))

    def on_dynamo_functions(functions):
        with _lock:
            if _applied:
                for patch in machinery.dynamo_wrapper_patches(functions, wrapped):
                    patching.install_or_log(patch)

    def on_device_interface(device_interface):
        with _lock:
            if _applied:
                for patch in machinery.device_interface_patches(device_interface, replaced):
                    patching.install_or_log(patch)

    def on_dynamo_streams(module):
        with _lock:
            if _applied and runtime.masquerading:
                builtin = getattr(getattr(getattr(torch._C, "_dynamo", None), "utils", None),
                                  "get_current_stream", None)
                for patch in machinery.dynamo_stream_patches(module, builtin):
                    patching.install_or_log(patch)

    import devshim

    devshim.after_import("torch._dynamo.trace_rules", on_dynamo)
    devshim.after_import("torch._dynamo.variables.functions", on_dynamo_functions)
    devshim.after_import("torch._dynamo.device_interface", on_device_interface)
    # utils before guards, which takes utils' function when it is imported: patched there, or
    # (Dynamo imported before activation) patched in both.
    devshim.after_import("torch._dynamo.utils", on_dynamo_streams)
    devshim.after_import("torch._dynamo.guards", on_dynamo_streams)


def refresh_from_environ():
    """In a process forked from one where the shim was applied (the runner's warm start,
    runner/engine/zygote/devshim_zygote.py), once the child has its own environment: reads again
    what is the process's own, where its redirection record goes (TORCHDEVICE_RECORD). The policy,
    mode and patches stay the parent's, which started with the same environment as each child;
    the record's counts start at zero in the child (record._after_fork)."""
    global _settings, _atexit_registered
    with _lock:
        if not _applied:
            return
        _settings = dataclasses.replace(_settings, record_path=config.from_environ().record_path)
        if _settings.record_path:
            test_hooks.install()
            if not _atexit_registered:
                atexit.register(_write_record)
                _atexit_registered = True


def _backend_for(torch):
    from devshim import backends

    return backends.for_device(torch, runtime.used_type, _settings.cpu_memory)


def remove():
    """Restores every patched attribute (for tests). The record collected so far is kept."""
    global _applied
    with _lock:
        patching.restore_all()
        torch = sys.modules.get("torch")
        if torch is not None:
            machinery.unsync_builtins(torch)
            scripted.remove_hooks(torch)
        record.drop_site_caches()
        record._first_hit_listeners[:] = []
        record.compiling = bool
        test_hooks.uninstalled()
        _applied = False


def state():
    """What apply() decided, for devshim.status()."""
    return {
        "mode": runtime.mode if _applied else None,
        "policy": runtime.policy if _applied else _settings.policy,
        "hardware": {"accelerator": runtime.hardware.accelerator, "mps": runtime.hardware.mps,
                     "cuda_device_count": runtime.hardware.cuda_device_count} if _applied else None,
        "cuda_lands_on": runtime.used if _applied else None,
        "masquerading": bool(_applied and runtime.mode == "redirect" and runtime.masquerading),
        "allow_redirects": _settings.allow_redirects,
        "log_level": _settings.log_level,
        "record_path": _settings.record_path,
        "device_objects": _settings.device_objects,
        "patched_attributes": len(patching.installed()),
    }
