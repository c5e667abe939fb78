"""Bytes of the tensors the program placed on "cuda" that landed on the CPU and are still alive.

The CPU allocator keeps no statistics. While the CPU masquerades as CUDA, ``torch.cuda``'s memory
queries answer this count instead of 0: the storages of the tensors that a redirected request put
on the device used (a factory's ``device="cuda"``, ``Tensor.to/.cuda``, ``Module.to/.cuda``),
each storage counted once, while such a tensor is alive. A lower bound of what CUDA would report:
tensors computed from placed ones are not counted, and a ``.to("cuda")`` that returns its CPU
input counts the input (it is the same memory).

Cost on the hot path: a weak reference appended to a list. The count is made when asked (a walk
over the live references, which also drops dead ones and duplicates); the list is also pruned
when it doubles, so it stays proportional to the live placed tensors. Peaks are the largest count
seen by a query since the last reset (as for MPS, devshim/backends.py).
"""

from __future__ import annotations

import weakref

_refs: list = []
_append = _refs.append
_ref = weakref.ref
_limit = 4096
_peak = 0
_tensor_type = None


def configure(torch) -> None:
    global _tensor_type, _peak, _limit
    _tensor_type = torch.Tensor
    _refs.clear()
    _peak = 0
    _limit = 4096


def track(tensor) -> None:
    """Hot path: remembers a tensor placed on the device used."""
    try:
        _append(_ref(tensor))
    except TypeError:  # not a tensor (a tuple from a .to() overload, ...)
        return
    if len(_refs) > _limit:
        _prune()


def track_module(module) -> None:
    for t in module.parameters():
        _append(_ref(t))
    for t in module.buffers():
        _append(_ref(t))
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
    _limit = max(4096, 2 * len(_refs))
    return live


def allocated() -> int:
    global _peak
    total, storages = 0, set()
    for t in _prune():
        if t.device.type != "cpu":
            continue
        try:
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
        except Exception:  # sparse, nested, ...: not counted
            continue
        if ptr and ptr not in storages:
            storages.add(ptr)
            total += storage.nbytes()
    if total > _peak:
        _peak = total
    return total


def peak() -> int:
    return max(_peak, allocated())


def reset_peak() -> None:
    global _peak
    _peak = 0
    _peak = allocated()
