"""CUDA-only features, while the device used is not CUDA: a clear error, or a harmless no-op.

Raise ``NotImplementedError("devshim: <feature> (<api>) has/have no equivalent on <device>")`` —
never a silent wrong answer — for what has no equivalent:

- CUDA graphs: ``torch.cuda.CUDAGraph``, ``torch.cuda.graph``, ``make_graphed_callables``,
  ``graph_pool_handle``;
- the jiterator (runtime-compiled CUDA kernels): ``torch.cuda.jiterator._create_jit_fn``,
  ``_create_multi_output_jit_fn`` make their function as torch does (its code is parsed), and
  calling that function raises: torch itself checks for CUDA only then, and
  ``torch.testing._internal.common_methods_invocations`` makes four at import;
- NCCL called directly: ``torch.cuda.nccl.all_reduce``, ``reduce``, ``broadcast``, ``all_gather``,
  ``reduce_scatter``, ``version``, ``unique_id``, ``init_rank`` (``torch.distributed`` with backend
  "nccl" is carried: devshim/distributed.py; ``nccl.is_available`` answers False, as torch does
  for tensors that are not CUDA's);
- the CUDA caching allocator's own interfaces: ``caching_allocator_alloc``/``_delete``,
  ``MemPool``, ``use_mem_pool``, ``CUDAPluggableAllocator``, ``change_current_allocator``;
- raw CUDA handles: ``ExternalStream``, ``get_stream_from_external``, ``current_blas_handle``,
  ``current_solver_handle``;
- the CUDA allocator's memory history: ``torch.cuda.memory._record_memory_history``,
  ``_snapshot``, ``_dump_snapshot`` (``memory_snapshot()`` answers ``[]``: no segments);
- NVML's view of the GPU: ``clock_rate``, ``device_memory_used``, ``memory_usage``,
  ``power_draw``, ``temperature``, ``utilization`` (without devshim they fail inside NVML or for
  want of ``nvidia-ml-py``).

No-ops (``torch.cuda.nvtx``: ``range_push``, ``range_pop``, ``range_start``, ``range_end``,
``mark``, ``range``): NVTX ranges only annotate a profiler timeline; they change no result, so
dropping them is not a wrong answer. ``range_push``/``range_pop`` return the nesting depth as NVTX
does, ``range_start`` an id.
"""

from __future__ import annotations

import contextlib

from devshim import runtime
from devshim.cuda_masquerade import _note, replacing
from devshim.patching import MASQUERADE, RAISES, Patch, copy_signature, wraps

__all__ = ["plan", "message"]

# (owner path below torch, name, feature, verb)
_RAISING = (
    ("cuda", "CUDAGraph", "CUDA graphs", "have"),
    ("cuda", "graph", "CUDA graphs", "have"),
    ("cuda", "make_graphed_callables", "CUDA graphs", "have"),
    ("cuda", "graph_pool_handle", "CUDA graphs", "have"),
    ("cuda.nccl", "all_reduce", "NCCL collectives", "have"),
    ("cuda.nccl", "reduce", "NCCL collectives", "have"),
    ("cuda.nccl", "broadcast", "NCCL collectives", "have"),
    ("cuda.nccl", "all_gather", "NCCL collectives", "have"),
    ("cuda.nccl", "reduce_scatter", "NCCL collectives", "have"),
    ("cuda.nccl", "version", "NCCL", "has"),
    ("cuda.nccl", "unique_id", "NCCL communicators", "have"),
    ("cuda.nccl", "init_rank", "NCCL communicators", "have"),
    ("cuda", "caching_allocator_alloc", "the CUDA caching allocator", "has"),
    ("cuda", "caching_allocator_delete", "the CUDA caching allocator", "has"),
    ("cuda", "MemPool", "CUDA memory pools", "have"),
    ("cuda", "use_mem_pool", "CUDA memory pools", "have"),
    ("cuda", "CUDAPluggableAllocator", "pluggable CUDA allocators", "have"),
    ("cuda", "change_current_allocator", "pluggable CUDA allocators", "have"),
    ("cuda", "ExternalStream", "external CUDA streams", "have"),
    ("cuda", "get_stream_from_external", "external CUDA streams", "have"),
    ("cuda", "current_blas_handle", "cuBLAS handles", "have"),
    ("cuda", "current_solver_handle", "cuSOLVER handles", "have"),
    ("cuda.memory", "_record_memory_history", "CUDA memory history", "has"),
    ("cuda.memory", "_snapshot", "CUDA memory history", "has"),
    ("cuda.memory", "_dump_snapshot", "CUDA memory history", "has"),
    ("cuda", "clock_rate", "NVML device queries", "have"),
    ("cuda", "device_memory_used", "NVML device queries", "have"),
    ("cuda", "memory_usage", "NVML device queries", "have"),
    ("cuda", "power_draw", "NVML device queries", "have"),
    ("cuda", "temperature", "NVML device queries", "have"),
    ("cuda", "utilization", "NVML device queries", "have"),
)

# Made as torch makes them; what they make raises when called (_raising_when_called).
_RAISING_WHEN_CALLED = (
    ("cuda.jiterator", "_create_jit_fn", "the CUDA jiterator", "has"),
    ("cuda.jiterator", "_create_multi_output_jit_fn", "the CUDA jiterator", "has"),
)


def message(feature: str, verb: str, api: str) -> str:
    return f"devshim: {feature} ({api}) {verb} no equivalent on {runtime.used}"


def _raising(feature, verb, api):
    def make(original):
        if isinstance(original, type):
            def __new__(cls, *args, **kwargs):
                raise NotImplementedError(message(feature, verb, api))

            name = original.__name__
            cls = type(name, (), {"__new__": __new__, "__doc__": message(feature, verb, api),
                                  "__module__": original.__module__, "__qualname__": name})
            return copy_signature(cls, original)

        @wraps(original)
        def raising(*args, **kwargs):
            raise NotImplementedError(message(feature, verb, api))

        return raising

    return make


class _Unlaunchable:
    """A jiterator function off CUDA: torch's own object (its attributes read through), whose
    call raises NotImplementedError where torch's would launch a CUDA kernel."""

    def __init__(self, jitted, text):
        self._jitted = jitted
        self._text = text

    def __getattr__(self, name):
        jitted = self.__dict__.get("_jitted")  # absent while copy or pickle builds one
        if jitted is None:
            raise AttributeError(name)
        return getattr(jitted, name)

    def __call__(self, *tensors, **kwargs):
        raise NotImplementedError(self._text)


def _raising_when_called(feature, verb, api):
    def make(original):
        @wraps(original)
        def create(*args, **kwargs):
            return _Unlaunchable(original(*args, **kwargs), message(feature, verb, api))

        return create

    return make


# --------------------------------------------------------------------------- nvtx no-ops

_depth = [0]


def range_push(msg):
    _note("torch.cuda.nvtx.range_push")
    _depth[0] += 1
    return _depth[0] - 1


def range_pop():
    _note("torch.cuda.nvtx.range_pop")
    if _depth[0] == 0:
        return -1
    _depth[0] -= 1
    return _depth[0]


def range_start(msg):
    _note("torch.cuda.nvtx.range_start")
    return 0


def range_end(range_id):
    _note("torch.cuda.nvtx.range_end")


def mark(msg):
    _note("torch.cuda.nvtx.mark")


@contextlib.contextmanager
def _range(msg, *args, **kwargs):
    yield


def range(msg, *args, **kwargs):
    _note("torch.cuda.nvtx.range")
    return _range(msg, *args, **kwargs)


_NVTX = (range_push, range_pop, range_start, range_end, mark, range)


def _owner(torch, path):
    owner = torch
    for part in path.split("."):
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    return owner


def plan(torch):
    patches = []
    for entries, make in ((_RAISING, _raising), (_RAISING_WHEN_CALLED, _raising_when_called)):
        for path, name, feature, verb in entries:
            owner = _owner(torch, path)
            if owner is not None and hasattr(owner, name):
                api = f"torch.{path}.{name}"
                patches.append(Patch(owner, name, make(feature, verb, api), (api,),
                                     when=MASQUERADE, kind=RAISES))
    nvtx = _owner(torch, "cuda.nvtx")
    if nvtx is not None:
        for fn in _NVTX:
            api = f"torch.cuda.nvtx.{fn.__name__}"
            patches.append(Patch(nvtx, fn.__name__, replacing(fn), (api,), when=MASQUERADE))
    return patches
