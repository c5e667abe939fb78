"""CUDA streams and events, while the device used is not CUDA.

Streams are logical: the CPU runs every operation to completion in program order, and MPS has one
command queue per process, so work is always ordered as if on one stream. Hence ``query()`` is
True, ``wait_stream``/``wait_event`` have nothing to wait for, and ``synchronize`` is the
device's (a no-op on the CPU, ``torch.mps.synchronize`` on MPS). ``torch.cuda.stream(s)``,
``with s:``, ``set_stream``, ``current_stream`` and ``default_stream`` keep track of the current
stream per thread, so code that checks ``current_stream() == s`` inside ``with
torch.cuda.stream(s)`` holds.

Events measure real time: ``record()`` takes ``time.perf_counter()`` (after synchronising the
device), and ``a.elapsed_time(b)`` is the milliseconds between the two records. On MPS, an event
made with ``enable_timing=True`` also records a ``torch.mps.Event`` and its ``elapsed_time``
(the device's own timer) is the answer. Like CUDA's, ``elapsed_time`` raises RuntimeError when
either event was made without ``enable_timing=True`` or was never recorded. Interprocess events
and IPC handles have no equivalent and raise NotImplementedError.

The device-generic ``torch.Stream()`` and ``torch.Event()``, asked for CUDA or for no device (the
current accelerator, CUDA under the masquerade), are these logical ones too (``_generic_new``).

``torch._C._cuda_getCurrentRawStream(index)``, the binding that libraries read at import to pass
CUDA's stream handle to kernels of their own (bitsandbytes), gives the current logical stream's
``cuda_stream``: 0, CUDA's handle of the default stream. A CPU build has no such binding, and
``import bitsandbytes`` failed at ``torch._C._cuda_getCurrentRawStream`` once ``is_available()``
was True; while the masquerade is on it is there. So are ``torch._C._cuda_setStream`` and
``_cuda_setDevice``, which torch's own test base calls around every CUDA device-type test
(``CudaNonDefaultStream``). No other ``torch._C._cuda_*``: torch decides whether it was built
with CUDA from the presence of ``_cuda_getDeviceCount``, ``_cuda_exchangeDevice``,
``_cuda_maybeExchangeDevice`` and ``_cuda_CUDAAllocator``.
"""

from __future__ import annotations

import threading
import time
import weakref

from devshim import cuda_masquerade, record, runtime
from devshim.cuda_masquerade import _note
from devshim.patching import CONSTRUCTOR, MASQUERADE, Patch, wraps

__all__ = ["Stream", "Event", "StreamContext", "plan"]

_perf_counter = time.perf_counter
_local = threading.local()
_default = None  # the default stream, made on first use
_next_id = [1]
_streams = weakref.WeakValueDictionary()  # stream_id -> the live logical streams


def _backend():
    return cuda_masquerade._backend


class Stream:
    """``torch.cuda.Stream`` on the device used: a logical, always-ordered stream."""

    def __init__(self, device=None, priority=0, **kwargs):
        _note("torch.cuda.Stream", device)
        self._init(priority)

    def _init(self, priority, stream_id=None):
        """stream_id: the next free one unless given (the default stream's 0, or an id
        torch._C._cuda_setStream names)."""
        self.priority = priority
        self.device_index = 0
        self.device_type = runtime.used_type
        if stream_id is None:
            stream_id = _next_id[0]
            _next_id[0] += 1
        self.stream_id = stream_id
        self.cuda_stream = 0
        _streams[stream_id] = self

    @property
    def device(self):
        import torch

        return torch.device(runtime.used)

    def query(self):
        return True

    def is_capturing(self):
        """A logical stream never captures (CUDA graphs raise NotImplementedError)."""
        return False

    def synchronize(self):
        _backend().synchronize()

    def wait_event(self, event):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self, event=None):
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __enter__(self):
        """``with stream:`` (torch.Stream's protocol; torch.nn.parallel.parallel_apply uses it):
        the stream is current inside the block, as in ``with torch.cuda.stream(stream)``."""
        entered = _local.__dict__.setdefault("entered", [])
        entered.append(getattr(_local, "stream", None))
        _local.stream = self
        return self

    def __exit__(self, type, value, traceback):
        _local.stream = _local.entered.pop()
        return False

    def __eq__(self, other):
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self):
        return hash(("devshim.Stream", self.stream_id))

    def __repr__(self):
        return f"<torch.cuda.Stream device={runtime.used} id={self.stream_id} (devshim: logical)>"


def _default_stream():
    global _default
    if _default is None:
        s = Stream.__new__(Stream)
        s._init(0, stream_id=0)
        _default = s
    return _default


def _current():
    return getattr(_local, "stream", None) or _default_stream()


class Event:
    """``torch.cuda.Event`` on the device used: timestamps taken when recorded."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        _note("torch.cuda.Event")
        if interprocess:
            raise NotImplementedError(
                "devshim: interprocess CUDA events (torch.cuda.Event(interprocess=True)) have no "
                f"equivalent on {runtime.used}")
        self.enable_timing = enable_timing
        self.blocking = blocking
        self._time = None
        self._device_event = _backend().timing_event(enable_timing) if enable_timing else None

    def record(self, stream=None):
        backend = _backend()
        if self._device_event is not None:
            self._device_event.record()
        else:
            backend.synchronize()
        self._time = _perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        if self._device_event is not None:
            self._device_event.synchronize()
        else:
            _backend().synchronize()

    def elapsed_time(self, end_event):
        record.hit("torch.cuda.Event.elapsed_time", "cuda", runtime.used, asked=True)
        if not (self.enable_timing and getattr(end_event, "enable_timing", False)):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or getattr(end_event, "_time", None) is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if self._device_event is not None and end_event._device_event is not None:
            return float(self._device_event.elapsed_time(end_event._device_event))
        return (end_event._time - self._time) * 1000.0

    def ipc_handle(self):
        raise NotImplementedError(
            "devshim: CUDA IPC event handles (torch.cuda.Event.ipc_handle) have no equivalent on "
            f"{runtime.used}")

    @classmethod
    def from_ipc_handle(cls, device, handle):
        raise NotImplementedError(
            "devshim: CUDA IPC event handles (torch.cuda.Event.from_ipc_handle) have no "
            f"equivalent on {runtime.used}")

    def __repr__(self):
        state = "recorded" if self._time is not None else "not recorded"
        return f"<torch.cuda.Event {state} (devshim: on {runtime.used})>"


class StreamContext:
    """``torch.cuda.StreamContext(stream)``: makes ``stream`` current inside the block."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is None:
            return None
        self.prev = getattr(_local, "stream", None)
        _local.stream = self.stream
        return self.stream

    def __exit__(self, type, value, traceback):
        if self.stream is not None:
            _local.stream = self.prev
        return False


def stream(stream):
    _note("torch.cuda.stream")
    return StreamContext(stream)


def set_stream(stream):
    _note("torch.cuda.set_stream")
    if stream is not None:
        _local.stream = stream


def current_stream(device=None):
    _note("torch.cuda.current_stream", device)
    return _current()


def default_stream(device=None):
    _note("torch.cuda.default_stream", device)
    return _default_stream()


def _cuda_getCurrentRawStream(device_index):  # noqa: N802 (torch's name)
    _note("torch._C._cuda_getCurrentRawStream", device_index)
    return _current().cuda_stream


def _cuda_setStream(stream_id=0, device_index=0, device_type=0):  # noqa: N802 (torch's name)
    """The binding ``torch.cuda.set_stream`` calls with a stream's three fields; torch's own
    test base (``CudaNonDefaultStream`` of every CUDA device-type test) calls it directly. The
    stream of that id becomes current: a live one of this process, the default (id 0), or a
    logical one made with that id."""
    _note("torch._C._cuda_setStream", device_index)
    stream = _default_stream() if stream_id == 0 else _streams.get(stream_id)
    if stream is None:
        stream = Stream.__new__(Stream)
        stream._init(0, stream_id)
    _local.stream = stream


def _cuda_setDevice(device):  # noqa: N802 (torch's name)
    """The binding ``torch.cuda.set_device`` calls; torch's test base calls it directly."""
    _note("torch._C._cuda_setDevice", device)
    runtime.select_cuda_index(device)


def _record_stream(original):
    @wraps(original)
    def record_stream(self, stream):
        if isinstance(stream, Stream) or self.device.type != "cuda":
            return None  # the device used orders all work: nothing to keep alive
        return original(self, stream)

    return record_stream


def _generic_new(generic, make, api):
    """``torch.Stream.__new__``/``torch.Event.__new__`` (the device-generic classes): a request
    for CUDA, or for no device (the current accelerator, which the masquerade says is CUDA),
    makes the masquerade's logical stream or event (``make``), what ``torch.cuda.Stream()`` and
    ``torch.accelerator.current_stream()`` give, so the two kinds wait on each other. Another
    device (``torch.Stream("cpu")``), and subclasses, are torch's own. Without it a CUDA build
    with no GPU raised ``cudaErrorInsufficientDriver`` for ``torch.Stream()`` (torchtune's
    activation offloading), and a CPU build "not linked with support for cuda devices" for
    ``torch.Stream("cuda")``."""

    def patch(original_new):
        def __new__(cls, *args, **kwargs):
            if cls is not generic:
                return original_new(cls, args, kwargs)
            device = args[0] if args else kwargs.get("device")
            if device is not None and runtime.redirect(device) is None:
                return original_new(cls, args, kwargs)
            _note(api, device)
            kwargs.pop("device", None)
            return make(*args[1:], **kwargs)

        return __new__

    return patch


def _logical_stream(priority=0):
    s = Stream.__new__(Stream)
    s._init(priority)
    return s


def reset() -> None:
    """Forgets the current and default streams (activation starts afresh)."""
    global _default
    _default = None
    _local.__dict__.clear()


def plan(torch):
    from devshim.cuda_masquerade import replacing, replacing_class

    patches = []
    for cls in (Stream, Event, StreamContext):
        patches.append(Patch(torch.cuda, cls.__name__, replacing_class(cls),
                             (f"torch.cuda.{cls.__name__}",), when=MASQUERADE))
    for fn in (stream, set_stream, current_stream, default_stream):
        patches.append(Patch(torch.cuda, fn.__name__, replacing(fn), (f"torch.cuda.{fn.__name__}",),
                             when=MASQUERADE))
    for binding in (_cuda_getCurrentRawStream, _cuda_setStream, _cuda_setDevice):
        patches.append(Patch(torch._C, binding.__name__, replacing(binding),
                             (f"torch._C.{binding.__name__}",), when=MASQUERADE))
    patches.append(Patch(torch.Tensor, "record_stream", _record_stream,
                         ("torch.Tensor.record_stream",), when=MASQUERADE))
    for cls, make in ((torch.Stream, _logical_stream), (torch.Event, Event)):
        api = f"torch.{cls.__name__}"
        patches.append(Patch(cls, "__new__", _generic_new(cls, make, api), (api,),
                             when=MASQUERADE, target=CONSTRUCTOR))
    return patches


# Methods carried on the classes above, for carried_apis().
METHOD_APIS = tuple(
    f"torch.cuda.{cls.__name__}.{name}"
    for cls in (Stream, Event)
    for name in vars(cls)
    if not name.startswith("_") and "ipc" not in name and callable(getattr(cls, name))
    and name != "is_capturing"  # torch.Stream's (what torch.accelerator.current_stream gives)
)
RAISING_METHOD_APIS = ("torch.cuda.Event.ipc_handle", "torch.cuda.Event.from_ipc_handle")
