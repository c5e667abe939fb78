"""Where requests land in this process: the policy of devshim/policy.py bound to this machine.

``configure(hardware, policy, allow_redirects)`` is called once per activation. Afterwards:

- ``mode`` is "redirect" (the patches apply the policy) or "passthrough" (a CUDA machine without
  TORCH_ALLOW_REDIRECTS: CUDA code runs as written and torch is left alone);
- ``used`` is where a plain "cuda" request lands ("cpu", "mps" or "cuda"), ``used_type`` its type,
  and ``masquerading`` is true when that is not CUDA (torch.cuda then answers for ``used``);
- ``default_device`` is the device a factory called without one is given, or None when torch's own
  default (the CPU) is already the policy's answer;
- ``cache`` maps a request (a string, torch.device or ordinal) to the device string it is rewritten
  to, or to None when the request stands as it is. Anything else (a tracer's proxy, a bool) is
  not a request: it stands as it is, is not cached and is not looked into (an fx ``Proxy`` would
  record every attribute read as a graph node). The patches read it directly — one dict lookup
  on the hot path — and call ``resolve_uncached`` on a miss. ``cpu:-1`` (which toggles the CPU
  override) is never cached, and a toggle empties the cache, so every cached answer is current.
"""

from __future__ import annotations

import os
import threading

from devshim.policy import Hardware, format_device, parse_device, resolve

__all__ = [
    "configure",
    "probe_hardware",
    "resolve_uncached",
    "requested_text",
    "cache",
    "masquerade_device_count",
]

cache: dict = {}
hardware = Hardware()
policy = "default"
mode = "redirect"
used = "cpu"
used_type = "cpu"
masquerading = True
default_device: str | None = None
override = False
_request_types: tuple = (str, int)  # and torch.device, once configure() is given it
device_class: type | None = None  # torch.device, once configure() is given it
_lock = threading.Lock()


def masquerade_device_count() -> int:
    """How many CUDA devices torch.cuda has while masquerading: one per process of a distributed
    job on this host, else one. A job's processes each take a GPU by their local rank, as on a
    node with one GPU per process (``torch.cuda.set_device(local_rank)``, ``cuda:{local_rank}``;
    torchtnt refuses a local rank past ``device_count()``), and every one of them is the device
    used. Its size is ``LOCAL_WORLD_SIZE`` (torchrun's), else ``WORLD_SIZE`` in a process with a
    ``LOCAL_RANK`` (``torch.multiprocessing.spawn`` and the launchers that set only those); read
    at each call, as launchers set them after the shim is active."""
    env = os.environ
    size = env.get("LOCAL_WORLD_SIZE")
    if size is None and "LOCAL_RANK" in env:
        size = env.get("WORLD_SIZE")
    if not size:
        return 1
    try:
        return max(1, int(size))
    except ValueError:
        return 1


_selected_cuda_index = 0  # torch.cuda.set_device's, while masquerading


def selected_cuda_index() -> int:
    """``torch.cuda.current_device()`` while masquerading: the index ``set_device`` selected when
    it is a device of this masquerade (a process of a distributed job on this host selects its
    local rank), else 0."""
    index = _selected_cuda_index
    return index if index < masquerade_device_count() else 0


def select_cuda_index(device) -> None:
    """``torch.cuda.set_device(device)`` while masquerading: an int, ``"cuda:N"`` or a device
    object of type "cuda" with an index selects N when the masquerade has device N (else device 0
    stays selected: the policy's "cuda:n that does not exist"); anything else (``"cuda"``, a
    negative index, a device object the policy built as the device used, which no longer says
    its index) selects nothing."""
    global _selected_cuda_index
    if isinstance(device, str):
        kind, _, index = device.partition(":")
        device = int(index) if kind == "cuda" and index.isdigit() else None
    elif type(device).__name__ == "device":
        device = device.index if device.type == "cuda" else None
    if type(device) is not int or device < 0:
        return
    _selected_cuda_index = device if device < masquerade_device_count() else 0


def probe_hardware(torch) -> Hardware:
    """What this machine has, asked of torch's own (unpatched) functions."""
    mps = getattr(torch.backends, "mps", None)
    has_mps = bool(mps is not None and mps.is_available())
    cuda_count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return Hardware(mps=has_mps, cuda_device_count=cuda_count)


def configure(hw: Hardware, policy_name: str = "default", allow_redirects: bool = False,
              torch_device: type | None = None) -> None:
    """Binds the policy to ``hw`` and resets the override and the cache. ``torch_device``
    (torch.device) is a request type besides strings and ordinals."""
    global hardware, policy, mode, used, used_type, masquerading, default_device, override
    global _request_types, device_class
    with _lock:
        if torch_device is not None:
            _request_types = (str, int, torch_device)
            device_class = torch_device
        hardware, policy, override = hw, policy_name, False
        cache.clear()
        mode = "passthrough" if hw.accelerator == "cuda" and not allow_redirects else "redirect"
        used = resolve("cuda", hw, policy=policy_name).device_str
        used_type = used.split(":", 1)[0]
        masquerading = used_type != "cuda"
        none = resolve(None, hw, policy=policy_name).device_str
        default_device = None if none == "cpu" else none


def _same(requested, decided) -> bool:
    kind, index = requested
    dkind, dindex = decided
    if kind != dkind:
        return False
    if index == dindex:
        return True
    return kind in ("cpu", "mps") and index in (None, 0) and dindex in (None, 0)


def resolve_uncached(device) -> str | None:
    """The device string ``device`` is rewritten to, or None when it stands as requested.

    Not a device (torch will say so) also gives None. ``cpu:-1`` flips the override and empties
    the cache; every other answer is cached.
    """
    global override
    if not isinstance(device, _request_types) or type(device) is bool:
        return None
    try:
        req = parse_device(device)
    except (ValueError, TypeError):
        return None
    if req is None:
        return None
    with _lock:
        decision = resolve(req, hardware, override, policy)
        toggled = decision.override != override
        override = decision.override
        if toggled:
            cache.clear()
        result = None if _same(req, decision.device) else decision.device_str
        if not toggled:  # a toggle empties the cache, so every other answer may be kept
            try:
                cache[device] = result
            except TypeError:  # unhashable request: answer without caching
                pass
    return result


# A pure function of its argument and this activation's policy, hardware and override: Dynamo
# (torch.compile) calls it while tracing and keeps the answer as a constant of the graph, instead of
# tracing into it (its lock would break the graph). torch._dynamo's own assume_constant_result sets
# this attribute; importing torch._dynamo to call it would cost every process.
resolve_uncached._dynamo_marked_constant = True


def redirect(device) -> str | None:
    """``cache`` first, then ``resolve_uncached``: the device string to use, or None."""
    try:
        return cache[device]
    except (KeyError, TypeError):
        return resolve_uncached(device)


def requested_text(device) -> str:
    """How a request is written in the record: "(none)", "cuda", "cuda:1", "cpu:-1"."""
    if device is None:
        return "(none)"
    try:
        return format_device(parse_device(device))
    except (ValueError, TypeError):
        return str(device)
