"""``torch.cuda`` answering for the device actually used, when that is not CUDA.

Applies only while masquerading (runtime.masquerading: the device a "cuda" request lands on is
the CPU or MPS); on a machine whose device used is CUDA, torch.cuda's own functions are left
alone. The answers agree with each other: ``is_available()`` is True, ``device_count()`` is 1 (the
one device used; in a process of a distributed job on this host, one per process of it, each the
device used: runtime.masquerade_device_count), ``current_device()`` is the device ``set_device``
selected (runtime.selected_cuda_index: 0 unless a job's process selected its local rank), and
``get_device_capability()`` is
``(props.major, props.minor)`` of ``get_device_properties()``. Values come from
devshim/backends.py (honest: 0 allocated bytes on the CPU, host memory as total memory, ...).

Every replacement has the original's parameters (names, kinds, defaults) and, through
functools.update_wrapper, its name, docstring and ``inspect.signature``. Each call made by the
program (not by torch itself: ``torch.manual_seed`` calls ``torch.cuda.manual_seed_all``) is
recorded with requested "cuda" (or "cuda:N" when a device was named) and used the device used.

Device arguments are accepted and recorded, never refused: "cuda:3" on a one-device masquerade is
the policy's "cuda:n that does not exist -> device 0", as for tensors.
"""

from __future__ import annotations

import collections
import functools
import os
import types

from devshim import record, runtime
from devshim.patching import MASQUERADE, Patch, copy_signature

__all__ = ["plan", "configure", "note_first_use", "replacing", "replacing_class",
           "DeviceProperties"]

_backend = None
_torch_dir = ""
_initialized = False
_caching_allocator_enabled = True


def configure(torch, backend) -> None:
    """Binds the masquerade to the backend of the device used; resets the initialised flag and
    the caching allocator's switch."""
    global _backend, _torch_dir, _initialized, _caching_allocator_enabled
    _backend = backend
    _torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    _initialized = False
    _caching_allocator_enabled = True


def _mark_initialized() -> None:
    global _initialized
    _initialized = True


# torch.cuda calls that initialise CUDA: those whose body calls torch.cuda._lazy_init in torch's
# own source, or calls one that does (current_device, get_device_properties, ...), and those
# whose C++ binding initialises it (set_device, a Stream or an Event made). The others do not:
# is_available, device_count, memory_allocated, empty_cache, and manual_seed and set_rng_state,
# which queue their work until CUDA is initialised. tests/shim/test_cuda_masquerade.py checks the
# first kind against the torch installed.
_INITIALISING = frozenset(f"torch.cuda.{n}" for n in (
    "init", "set_device", "current_device", "get_device_name", "get_device_properties",
    "get_device_capability", "is_bf16_supported", "is_tf32_supported", "can_device_access_peer",
    "cudart", "synchronize", "Stream", "Event", "current_stream", "default_stream",
    "get_stream_from_external", "current_blas_handle", "current_solver_handle",
    "set_sync_debug_mode", "get_sync_debug_mode", "ipc_collect", "mem_get_info",
    "caching_allocator_alloc", "use_mem_pool", "set_per_process_memory_fraction",
    "get_per_process_memory_fraction", "get_rng_state", "get_rng_state_all", "initial_seed"))

# Redirected calls outside torch.cuda that do not initialise CUDA in torch: building or entering
# a device object, naming a default device (tensors made on it later do), asking for the device
# module, autocast's dtype or the CUDA version torch was built with, and torch.accelerator's
# queries that its docs say leave an uninitialised accelerator so (is_available, device_count,
# current_accelerator: "does not poison fork"; synchronize and the memory statistics: "a no-op"
# or nothing to report before it is initialised). torch.testing._internal.common_cuda builds
# torch.device("cuda:0") at import and then asserts that CUDA is not initialised.
_NOT_INITIALISING = frozenset((
    "torch.device", "torch.device.__enter__", "torch.set_default_device",
    "torch._C._cuda_getCompiledVersion", "torch._C._cuda_cudaCachingAllocator_is_enabled",
    "torch._C._cuda_cudaCachingAllocator_enable", "torch._C._cuda_clearCublasWorkspaces",
    "torch.get_device_module", "torch.get_autocast_gpu_dtype",
    *(f"torch.accelerator.{n}" for n in (
        "is_available", "device_count", "current_accelerator", "synchronize", "empty_cache",
        "empty_host_cache", "memory_stats", "memory_allocated", "max_memory_allocated",
        "memory_reserved", "max_memory_reserved", "reset_accumulated_memory_stats",
        "reset_peak_memory_stats"))))


def note_first_use(api: str) -> None:
    """record's first-hit listener: CUDA counts as initialised once the program has used it.

    That is: a tensor, module or factory sent to "cuda" (a redirected API outside torch.cuda but
    those of _NOT_INITIALISING), or one of the torch.cuda calls that initialise CUDA, or
    ``init()``.
    """
    if api.startswith("torch.cuda."):
        if api in _INITIALISING:
            _mark_initialized()
    elif api not in _NOT_INITIALISING:
        _mark_initialized()


def _requested(device) -> str:
    if device is None:
        return "cuda"
    if type(device) is int:
        return f"cuda:{device}"
    return runtime.requested_text(device)


def _note(api, device=None) -> None:
    """Records a call of ``api``, a masqueraded function called by the program, as an asked call
    (devshim/record.py: not a device placement). Calls that torch makes, directly or through
    devshim's own forwarding (``torch.accelerator.current_stream()`` asking
    ``torch.cuda.current_stream()`` for an optimizer), are not recorded, nor calls while Dynamo
    traces: its own stream bookkeeping asks for the current stream in every compiled module, and
    a frame lookup there would break the graph."""
    if record.compiling():
        return
    record.hit(api, _requested(device), runtime.used, depth=3, asked=True)


class DeviceProperties:
    """What ``torch.cuda.get_device_properties`` returns for a device that is not CUDA.

    The fields of torch's ``_CudaDeviceProperties`` that programs read, with honest values for the
    device used; ``major``/``minor`` are ``get_device_capability()``.
    """

    def __init__(self, backend):
        self.name = backend.name()
        self.major, self.minor = backend.capability()
        self.total_memory = backend.total_memory()
        self.multi_processor_count = backend.processor_count()
        self.is_integrated = int(backend.is_integrated())
        self.is_multi_gpu_board = 0
        self.max_threads_per_multi_processor = 1
        self.max_threads_per_block = 1
        self.warp_size = 1
        self.regs_per_multiprocessor = 0
        self.shared_memory_per_block = 0
        self.shared_memory_per_block_optin = 0
        self.shared_memory_per_multiprocessor = 0
        self.L2_cache_size = 0
        self.clock_rate = 0
        self.memory_clock_rate = 0
        self.memory_bus_width = 0
        self.pci_bus_id = 0
        self.pci_device_id = 0
        self.pci_domain_id = 0
        self.gcnArchName = ""
        self.uuid = f"devshim-{backend.type}-0"
        self.type = backend.type

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid}, "
                f"devshim_device='{self.type}')")


# --------------------------------------------------------------------------- devices


def is_available():
    _note("torch.cuda.is_available")
    return True


def device_count():
    _note("torch.cuda.device_count")
    return runtime.masquerade_device_count()


def current_device():
    _note("torch.cuda.current_device")
    return runtime.selected_cuda_index()


def set_device(device):
    _note("torch.cuda.set_device", device)
    runtime.select_cuda_index(device)


def get_device_name(device=None):
    _note("torch.cuda.get_device_name", device)
    return _backend.name()


def get_device_properties(device=None):
    _note("torch.cuda.get_device_properties", device)
    return DeviceProperties(_backend)


def get_device_capability(device=None):
    _note("torch.cuda.get_device_capability", device)
    return _backend.capability()


def is_bf16_supported(including_emulation=True):
    _note("torch.cuda.is_bf16_supported")
    return _backend.bf16_supported(including_emulation)


def is_tf32_supported():
    _note("torch.cuda.is_tf32_supported")
    return False


def can_device_access_peer(device, peer_device):
    _note("torch.cuda.can_device_access_peer", device)
    return False


def is_current_stream_capturing():
    _note("torch.cuda.is_current_stream_capturing")
    return False


def synchronize(device=None):
    _note("torch.cuda.synchronize", device)
    _backend.synchronize()


def _sleep(cycles):
    """``torch.cuda._sleep``: a kernel that spins for ``cycles`` on the current stream, so that
    tests can hold a stream back and check who waits for it. The device used runs each operation
    in the order issued (the masquerade's streams are logical), so nothing is held back: a no-op."""
    _note("torch.cuda._sleep")


def init():
    _note("torch.cuda.init")
    _mark_initialized()


def _lazy_init():
    _mark_initialized()


def is_initialized():
    initialized = _initialized  # before _note: asking is not using
    _note("torch.cuda.is_initialized")
    return initialized


class device:
    """``torch.cuda.device(d)``: a context manager selecting device ``d`` (there is one: 0)."""

    def __init__(self, device):
        _note("torch.cuda.device", device)
        self.idx = -1 if device is None or (type(device) is int and device < 0) else 0
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = 0
        return self

    def __exit__(self, type, value, traceback):
        return False


class device_of(device):
    """``torch.cuda.device_of(obj)``: the device of a tensor (or storage), as a context manager."""

    def __init__(self, obj):
        on_used = getattr(getattr(obj, "device", None), "type", None) == runtime.used_type
        super().__init__(0 if on_used else -1)


# --------------------------------------------------------------------------- memory

_STAT_KEYS = ("allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes")


def memory_allocated(device=None):
    _note("torch.cuda.memory_allocated", device)
    return _backend.allocated()


def max_memory_allocated(device=None):
    _note("torch.cuda.max_memory_allocated", device)
    return _backend.peak_allocated()


def memory_reserved(device=None):
    _note("torch.cuda.memory_reserved", device)
    return _backend.reserved()


def max_memory_reserved(device=None):
    _note("torch.cuda.max_memory_reserved", device)
    return _backend.peak_reserved()


def memory_cached(device=None):
    _note("torch.cuda.memory_cached", device)
    return _backend.reserved()


def max_memory_cached(device=None):
    _note("torch.cuda.max_memory_cached", device)
    return _backend.peak_reserved()


def mem_get_info(device=None):
    _note("torch.cuda.mem_get_info", device)
    return (_backend.free_memory(), _backend.total_memory())


def empty_cache():
    _note("torch.cuda.empty_cache")
    _backend.empty_cache()


def reset_peak_memory_stats(device=None):
    _note("torch.cuda.reset_peak_memory_stats", device)
    _backend.reset_peaks()


def reset_max_memory_allocated(device=None):
    _note("torch.cuda.reset_max_memory_allocated", device)
    _backend.reset_peaks()


def reset_max_memory_cached(device=None):
    _note("torch.cuda.reset_max_memory_cached", device)
    _backend.reset_peaks()


def reset_accumulated_memory_stats(device=None):
    _note("torch.cuda.reset_accumulated_memory_stats", device)


def _stats():
    allocated, reserved = _backend.allocated(), _backend.reserved()
    peak_allocated, peak_reserved = _backend.peak_allocated(), _backend.peak_reserved()
    peaks = {"allocated_bytes": peak_allocated, "reserved_bytes": peak_reserved,
             "active_bytes": peak_allocated, "requested_bytes": peak_allocated}
    current = {"allocated_bytes": allocated, "reserved_bytes": reserved, "active_bytes": allocated,
               "requested_bytes": allocated}
    stats = collections.OrderedDict()
    for key in _STAT_KEYS:
        for pool in ("all", "large_pool", "small_pool"):
            stats[f"{key}.{pool}.current"] = current[key] if pool == "all" else 0
            stats[f"{key}.{pool}.peak"] = peaks[key] if pool == "all" else 0
            stats[f"{key}.{pool}.allocated"] = 0
            stats[f"{key}.{pool}.freed"] = 0
    for key in ("allocation", "segment", "active", "inactive_split"):
        for stat in ("current", "peak", "allocated", "freed"):
            stats[f"{key}.all.{stat}"] = 0
    stats["num_alloc_retries"] = 0
    stats["num_ooms"] = 0
    stats["num_sync_all_streams"] = 0
    stats["num_device_alloc"] = 0
    stats["num_device_free"] = 0
    return stats


def memory_stats(device=None):
    _note("torch.cuda.memory_stats", device)
    return _stats()


def memory_stats_as_nested_dict(device=None):
    _note("torch.cuda.memory_stats_as_nested_dict", device)
    nested = {}
    for key, value in _stats().items():
        node = nested
        *path, leaf = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def memory_summary(device=None, abbreviated=False):
    _note("torch.cuda.memory_summary", device)
    b, mib = _backend, 1024 * 1024
    lines = [
        f"devshim: torch.cuda memory summary for the device used ({b.type})",
        f"  allocated: {b.allocated() / mib:.1f} MiB (peak {b.peak_allocated() / mib:.1f} MiB)",
        f"  reserved:  {b.reserved() / mib:.1f} MiB (peak {b.peak_reserved() / mib:.1f} MiB)",
        f"  free / total: {b.free_memory() / mib:.0f} / {b.total_memory() / mib:.0f} MiB",
    ]
    if _backend.type == "cpu":
        lines.append("  (the CPU allocator keeps no statistics: allocated and reserved are 0)")
    return "\n".join(lines) + "\n"


def memory_snapshot(mempool_id=None, include_traces=True):
    _note("torch.cuda.memory_snapshot")
    return []


def set_per_process_memory_fraction(fraction, device=None):
    _note("torch.cuda.set_per_process_memory_fraction", device)
    _backend.set_memory_fraction(fraction)


def get_per_process_memory_fraction(device=None):
    _note("torch.cuda.get_per_process_memory_fraction", device)
    return _backend.memory_fraction()


def host_memory_stats_as_nested_dict():
    """No statistics: pinned memory on the device used is not held by CUDA's host allocator
    (what torch's CPU build answers before CUDA is initialised)."""
    _note("torch.cuda.host_memory_stats_as_nested_dict")
    return {}


def reset_accumulated_host_memory_stats():
    _note("torch.cuda.reset_accumulated_host_memory_stats")


def reset_peak_host_memory_stats():
    _note("torch.cuda.reset_peak_host_memory_stats")


def get_allocator_backend():
    """``"native"``: the memory queries above answer as torch's own caching allocator does (the
    other backend, ``cudaMallocAsync``, is CUDA's)."""
    _note("torch.cuda.get_allocator_backend")
    return "native"


def ipc_collect():
    """Nothing to collect: only CUDA processes share memory through CUDA IPC."""
    _note("torch.cuda.ipc_collect")


# --------------------------------------------------------------------------- sync debug mode

_SYNC_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}
_sync_debug_mode = [0]


def set_sync_debug_mode(debug_mode):
    """Kept and answered by get_sync_debug_mode; nothing warns or errors, as no operation on the
    device used synchronises with a CUDA device."""
    _note("torch.cuda.set_sync_debug_mode")
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = _SYNC_DEBUG_MODES[debug_mode]
    _sync_debug_mode[0] = int(debug_mode)


def get_sync_debug_mode():
    _note("torch.cuda.get_sync_debug_mode")
    return _sync_debug_mode[0]


# --------------------------------------------------------------------------- RNG


def manual_seed(seed):
    _note("torch.cuda.manual_seed")
    _backend.manual_seed(seed)


def manual_seed_all(seed):
    _note("torch.cuda.manual_seed_all")
    _backend.manual_seed(seed)


def seed():
    _note("torch.cuda.seed")
    _backend.seed()


def seed_all():
    _note("torch.cuda.seed_all")
    _backend.seed()


def initial_seed():
    _note("torch.cuda.initial_seed")
    return _backend.initial_seed()


def get_rng_state(device="cuda"):
    _note("torch.cuda.get_rng_state", None if device == "cuda" else device)
    return _backend.get_rng_state()


def set_rng_state(new_state, device="cuda"):
    _note("torch.cuda.set_rng_state", None if device == "cuda" else device)
    _backend.set_rng_state(new_state)


def get_rng_state_all():
    _note("torch.cuda.get_rng_state_all")
    return [_backend.get_rng_state()]


def set_rng_state_all(new_states):
    _note("torch.cuda.set_rng_state_all")
    for state in new_states:
        _backend.set_rng_state(state)
        break


# --------------------------------------------------------------------------- the plan

_FUNCTIONS = (
    is_available, device_count, current_device, set_device, get_device_name,
    get_device_properties, get_device_capability, is_bf16_supported, is_tf32_supported,
    can_device_access_peer, is_current_stream_capturing, synchronize, _sleep, init, _lazy_init,
    is_initialized,
    memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved, memory_cached,
    max_memory_cached, mem_get_info, empty_cache, reset_peak_memory_stats,
    reset_max_memory_allocated, reset_max_memory_cached, reset_accumulated_memory_stats,
    memory_stats, memory_stats_as_nested_dict, memory_summary, memory_snapshot,
    set_per_process_memory_fraction, get_per_process_memory_fraction,
    host_memory_stats_as_nested_dict, reset_accumulated_host_memory_stats,
    reset_peak_host_memory_stats, get_allocator_backend, ipc_collect, set_sync_debug_mode,
    get_sync_debug_mode,
    manual_seed, manual_seed_all, seed, seed_all, initial_seed, get_rng_state, set_rng_state,
    get_rng_state_all, set_rng_state_all,
)
_CLASSES = (device, device_of)


def replacing(impl):
    """A maker giving a fresh copy of function ``impl`` dressed as the original it replaces.

    A copy, so that update_wrapper never changes devshim's own function, and so that the
    replacement is ``impl`` itself (no extra call layer).
    """

    def make(original):
        fn = types.FunctionType(impl.__code__, impl.__globals__, impl.__name__, impl.__defaults__,
                                impl.__closure__)
        fn.__kwdefaults__ = impl.__kwdefaults__
        if original is not None:
            functools.update_wrapper(fn, original)
        fn.__devshim_impl__ = impl
        return fn

    return make


def replacing_class(cls):
    """A maker returning devshim's class ``cls``, with the original's ``inspect.signature``."""

    def make(original):
        if original is not None:
            copy_signature(cls, original)
        return cls

    return make


def _cuda_getCompiledVersion():  # noqa: N802 (torch's name)
    """The CUDA version torch was built with, a binding of CUDA builds that
    torch.testing._internal.jit_utils asks for at import once CUDA is available: a build without
    CUDA has none (torch.version.cuda stays None), so 0. Added only where the build lacks it."""
    _note("torch._C._cuda_getCompiledVersion")
    return 0


def _cuda_cudaCachingAllocator_is_enabled():  # noqa: N802 (torch's name)
    """Whether CUDA's caching allocator is on, a binding of CUDA builds that
    ``torch.cuda.caching_allocator_disabled()`` and torch's test base
    (``skipIfCachingAllocatorDisabled``) ask once CUDA is available: on, as on a CUDA machine
    by default, until ``_cuda_cudaCachingAllocator_enable(False)``."""
    _note("torch._C._cuda_cudaCachingAllocator_is_enabled")
    return _caching_allocator_enabled


def _cuda_cudaCachingAllocator_enable(value):  # noqa: N802 (torch's name)
    """The binding ``torch.cuda.caching_allocator_enable`` calls: remembered for
    ``_cuda_cudaCachingAllocator_is_enabled``; the device used allocates as it does."""
    global _caching_allocator_enabled
    _note("torch._C._cuda_cudaCachingAllocator_enable")
    _caching_allocator_enabled = bool(value)


def _cuda_clearCublasWorkspaces():  # noqa: N802 (torch's name)
    """Frees cuBLAS's workspaces, a binding of CUDA builds that torch's test base calls around
    its memory checks (``CudaMemoryLeakCheck``) and BLAS-backend tests: the device used keeps
    none, so there is nothing to free."""
    _note("torch._C._cuda_clearCublasWorkspaces")


# Bindings of CUDA builds that code reaches once CUDA is available; added only where the build
# lacks them (a CUDA build's own stay).
_BINDINGS = (_cuda_getCompiledVersion, _cuda_cudaCachingAllocator_is_enabled,
             _cuda_cudaCachingAllocator_enable, _cuda_clearCublasWorkspaces)


def plan(torch):
    patches = []
    for binding in _BINDINGS:
        name = binding.__name__
        if not hasattr(torch._C, name):
            patches.append(Patch(torch._C, name, replacing(binding), (f"torch._C.{name}",),
                                 when=MASQUERADE))
    for impl in _FUNCTIONS:
        name = impl.__name__
        if hasattr(torch.cuda, name):
            patches.append(Patch(torch.cuda, name, replacing(impl), (f"torch.cuda.{name}",),
                                 when=MASQUERADE))
    for cls in _CLASSES:
        patches.append(Patch(torch.cuda, cls.__name__, replacing_class(cls),
                             (f"torch.cuda.{cls.__name__}",), when=MASQUERADE))
    patches.append(Patch(torch.cuda, "default_generators",
                         lambda original: (_backend.generator(),),
                         ("torch.cuda.default_generators",), when=MASQUERADE))
    return patches
