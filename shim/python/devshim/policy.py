"""The redirection policy: a pure function of (request, hardware present, override state).

This is the redirection table of docs/shim.md#the-redirection-policy (TorchDevice's documented
behaviour). It knows nothing of torch: requests and results are plain (type, index) pairs, so
that every cell is testable on any machine with fake hardware descriptions, and the C++ shim
implements the same function against the same test vectors (shim/vectors/redirection.json).

A = the best accelerator present: MPS, else CUDA, else none.

| requested            | A = MPS | A = CUDA                              | no accelerator |
| no device given      | mps     | cuda                                  | cpu            |
| cpu, cpu:n           | mps     | cuda                                  | cpu            |
| cpu:-1               | cpu, and toggles the CPU override                               |
| mps, mps:n           | mps     | cuda                                  | cpu            |
| cuda, cuda:n         | mps     | cuda:n if device n exists, else cuda:0 | cpu           |

While the CPU override is on, an explicit ``cpu`` stays cpu. Under the ``accelerator-only``
policy an explicit ``cpu`` always stays cpu (the policy other vendors' migration tools use).
Device types other than cpu, cuda and mps (meta, xpu, ...) are never redirected. For cpu and mps
an index of None and 0 are the same device, and results carry no index.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Hardware", "Decision", "POLICIES", "parse_device", "resolve", "format_device"]

POLICIES = ("default", "accelerator-only")
_REDIRECTED = ("cpu", "cuda", "mps")


@dataclasses.dataclass(frozen=True)
class Hardware:
    """What the machine has. ``accelerator`` is "mps", "cuda" or None (MPS wins when both)."""

    mps: bool = False
    cuda_device_count: int = 0

    @property
    def accelerator(self) -> str | None:
        if self.mps:
            return "mps"
        if self.cuda_device_count > 0:
            return "cuda"
        return None


@dataclasses.dataclass(frozen=True)
class Decision:
    """The device to use, the override state after the call, and why (for the record)."""

    device: tuple[str, int | None]
    override: bool
    reason: str

    @property
    def device_str(self) -> str:
        return format_device(self.device)


def parse_device(spec) -> tuple[str, int | None] | None:
    """"cuda:1" / "cpu" / ("cuda", 1) / an object with .type and .index → (type, index).

    None means "no device given". Raises ValueError for a string that is not a device.
    """
    if spec is None:
        return None
    if isinstance(spec, tuple):
        return (str(spec[0]), spec[1])
    if hasattr(spec, "type") and hasattr(spec, "index"):
        return (str(spec.type), spec.index)
    if isinstance(spec, int):
        return ("cuda", spec)  # torch's convention: a bare ordinal is a CUDA device
    text = str(spec).strip()
    kind, sep, index = text.partition(":")
    if not kind or (sep and not index.lstrip("-").isdigit()):
        raise ValueError(f"not a device: {spec!r}")
    return (kind, int(index) if sep else None)


def format_device(device: tuple[str, int | None]) -> str:
    kind, index = device
    return kind if index is None else f"{kind}:{index}"


def _accelerator_device(hw: Hardware, index: int | None) -> tuple[tuple[str, int | None], str]:
    """Where a request for "an accelerator" (or for cuda:index) lands."""
    accel = hw.accelerator
    if accel == "mps":
        return ("mps", None), "mps is the accelerator present"
    if accel == "cuda":
        if index is None:
            return ("cuda", None), "cuda is the accelerator present"
        if 0 <= index < hw.cuda_device_count:
            return ("cuda", index), "cuda device exists"
        return ("cuda", 0), f"cuda:{index} does not exist ({hw.cuda_device_count} devices): cuda:0"
    return ("cpu", None), "no accelerator present"


def resolve(requested, hardware: Hardware, override: bool = False,
            policy: str = "default") -> Decision:
    """The device a request lands on. Pure: the caller keeps the override state."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (one of {', '.join(POLICIES)})")
    req = parse_device(requested)
    if req is None:
        device, why = _accelerator_device(hardware, None)
        return Decision(device, override, "no device given: " + why)
    kind, index = req
    if kind not in _REDIRECTED:
        return Decision((kind, index), override, f"{kind} is never redirected")
    if kind == "cpu":
        if index == -1:
            return Decision(("cpu", None), not override,
                            "cpu:-1 toggles the CPU override " + ("off" if override else "on"))
        if override:
            return Decision(("cpu", None), override, "CPU override is on")
        if policy == "accelerator-only":
            return Decision(("cpu", None), override, "accelerator-only policy keeps cpu")
        device, why = _accelerator_device(hardware, None)
        return Decision(device, override, "cpu requested: " + why)
    if kind == "mps":
        device, why = _accelerator_device(hardware, None)
        return Decision(device, override, "mps requested: " + why)
    # cuda
    device, why = _accelerator_device(hardware, index)
    return Decision(device, override, "cuda requested: " + why)
