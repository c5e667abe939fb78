"""Bytes of the tensors the program placed on "cuda" that landed on the CPU and are still alive.

The CPU allocator keeps no statistics. While the CPU masquerades as CUDA, ``torch.cuda``'s memory
queries answer this count instead of 0: the storages of the tensors that a redirected request put
on the device used (a factory's ``device="cuda"``, ``Tensor.to/.cuda``, ``Module.to/.cuda``),
each storage counted once, while such a tensor is alive. A lower bound of what CUDA would report:
tensors computed from placed ones are not counted, and a ``.to("cuda")`` that returns its CPU
input counts the input (it is the same memory).

Cost on the hot path: a weak reference appended to a list. The count is made when asked (a walk
over the live references, which also drops dead ones and duplicates); the list is also pruned
once it holds 256 more than the live tensors, or doubles. Pruning early matters: weak references
are objects the cyclic GC tracks, and thousands of dead ones kept waiting made Python run full
collections over all of torch's objects (+1.4 us per redirected call with a 4096 floor; about
+0.4 us with 256, bench/shim_overhead_bench.py). Peaks are the largest count
seen by a query since the last reset (as for MPS, devshim/backends.py).
"""

from __future__ import annotations

import itertools
import weakref

from devshim import runtime

_refs: list = []
_append = _refs.append
_ref = weakref.ref
_limit = 256
_peak = 0


def wanted() -> bool:
    """Whether placed tensors are counted: while the CPU masquerades as CUDA (MPS keeps its own
    statistics). Asked once when a patch is made, not per call."""
    return runtime.masquerading and runtime.used_type == "cpu"


def reset() -> None:
    """Forgets every tensor and the peak (a new activation)."""
    global _peak, _limit
    _refs.clear()
    _peak = 0
    _limit = 256


def track(tensor) -> None:
    """Hot path: remembers a tensor placed on the device used."""
    try:
        _append(_ref(tensor))
    except TypeError:  # not a tensor (a tuple from a .to() overload, ...)
        return
    if len(_refs) > _limit:
        _prune()


def track_module(module) -> None:
    """Remembers every parameter and buffer of a module placed on the device used that is a
    tensor. Another object held as a buffer (tensordict's TensorDict, which has no hash) is
    moved by torch but not counted; ``Module.buffers()`` would hash it and fail."""
    from torch import Tensor

    for m in module.modules():
        for t in itertools.chain(m._parameters.values(), m._buffers.values()):
            if isinstance(t, Tensor):
                _append(_ref(t))
    if len(_refs) > _limit:
        _prune()


def track_storage(tensor) -> None:
    """Remembers the storage of a tensor placed on the device used, not the tensor: a factory's
    result that becomes a parameter (``nn.Parameter(torch.empty(...))``) is gone at once, its
    storage lives on in the parameter. (torch keeps a storage's Python object while the storage
    lives, so a weak reference to it lasts as long as the memory.)"""
    try:
        _append(_ref(tensor.untyped_storage()))
    except (AttributeError, TypeError, RuntimeError):  # not a tensor; sparse, nested, ...
        return
    if len(_refs) > _limit:
        _prune()


def _prune():
    """Keeps one reference per live tensor; returns the live tensors."""
    global _limit
    live, seen = [], set()
    for r in _refs:
        t = r()
        if t is not None and id(t) not in seen:
            seen.add(id(t))
            live.append(t)
    _refs[:] = [_ref(t) for t in live]
    _limit = max(256, 2 * len(_refs))
    return live


def allocated() -> int:
    """Bytes of the live placed tensors' storages, each storage once; raises the peak."""
    from torch import UntypedStorage

    global _peak
    total, storages = 0, set()
    for t in _prune():
        try:
            storage = t if type(t) is UntypedStorage else t.untyped_storage()
            if storage.device.type != "cpu":
                continue
            ptr = storage.data_ptr()
        except Exception:  # sparse, nested, ...: not counted
            continue
        if ptr and ptr not in storages:
            storages.add(ptr)
            total += storage.nbytes()
    _peak = max(_peak, total)
    return total


def peak() -> int:
    allocated()
    return _peak


def reset_peak() -> None:
    global _peak
    _peak = 0
    allocated()
