"""What the device actually used can say about itself, for the torch.cuda masquerade.

``CpuBackend`` and ``MpsBackend`` answer the same questions (name, memory, RNG, synchronisation,
timing events); devshim/cuda_masquerade.py and devshim/streams.py ask them and never look at the
hardware themselves. Values are honest:

- CPU: no caching allocator and no statistics; allocated and reserved memory are the bytes of
  the live tensors the program placed "on cuda" (devshim/placed.py: a lower bound, what CUDA
  would count of them), peaks the largest such count seen by a query; total and free memory are
  the host's physical and available memory (os.sysconf), capped by TORCHDEVICE_CPU_MEMORY when
  set (free: the size less the placed bytes); the RNG is torch's CPU
  generator (``torch.default_generator``); every operation has finished when it returns, so
  synchronisation is a no-op and timing events need no device timer.
- MPS: memory from ``torch.mps.current_allocated_memory`` (allocated),
  ``driver_allocated_memory`` (reserved) and ``recommended_max_memory`` (total); peaks are the
  largest values seen by a query since the last reset (MPS keeps none); the RNG, synchronisation,
  ``empty_cache`` and timing events are torch.mps's.

``capability()`` is (0, 0) for both: neither is a CUDA device, and a program that picks kernels by
compute capability takes its most conservative path.
"""

from __future__ import annotations

import os
import platform

from devshim import placed

__all__ = ["CpuBackend", "MpsBackend", "for_device"]


def _host_memory():
    """(total, available) bytes of physical memory; (0, 0) when the system does not say."""
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        total = page * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0, 0
    try:
        free = page * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        free = total
    return total, free


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


class CpuBackend:
    """The CPU as the device used."""

    type = "cpu"

    def __init__(self, torch, budget: int | None = None):
        self.torch = torch
        # TORCHDEVICE_CPU_MEMORY (config.py): the size of the masqueraded device. Host memory is
        # shared with every other process: a test that fills "GPU" memory to its free size would
        # fill the host.
        self.budget = budget

    # -- identity
    def name(self) -> str:
        return f"CPU ({_cpu_model()}) via devshim"

    def capability(self):
        return (0, 0)

    def processor_count(self) -> int:
        return os.cpu_count() or 1

    def is_integrated(self) -> bool:
        return True

    def bf16_supported(self, including_emulation: bool) -> bool:
        if including_emulation:
            return True
        try:
            return bool(self.torch.ops.mkldnn._is_mkldnn_bf16_supported())
        except Exception:
            return False

    # -- memory
    def total_memory(self) -> int:
        total = _host_memory()[0]
        return total if self.budget is None else min(total, self.budget)

    def free_memory(self) -> int:
        free = _host_memory()[1]
        if self.budget is None:
            return free
        return max(0, min(free, self.budget - placed.allocated()))

    def allocated(self) -> int:
        return placed.allocated()

    def reserved(self) -> int:
        return placed.allocated()

    def peak_allocated(self) -> int:
        return placed.peak()

    def peak_reserved(self) -> int:
        return placed.peak()

    def reset_peaks(self) -> None:
        placed.reset_peak()

    def empty_cache(self) -> None:
        pass

    def set_memory_fraction(self, fraction: float) -> None:
        self._fraction = fraction

    def memory_fraction(self) -> float:
        return getattr(self, "_fraction", 1.0)

    # -- execution
    def synchronize(self) -> None:
        pass

    def timing_event(self, enable_timing: bool):
        """A device timer event, or None: host timestamps are exact on this device."""
        return None

    # -- RNG
    def generator(self):
        return self.torch.default_generator

    def manual_seed(self, seed: int) -> None:
        self.torch.default_generator.manual_seed(int(seed))

    def seed(self) -> None:
        self.torch.default_generator.seed()

    def initial_seed(self) -> int:
        return self.torch.default_generator.initial_seed()

    def get_rng_state(self):
        return self.torch.default_generator.get_state()

    def set_rng_state(self, state) -> None:
        self.torch.default_generator.set_state(state)


class MpsBackend(CpuBackend):
    """Apple's Metal (MPS) device as the device used; torch.mps where it has an equivalent."""

    type = "mps"

    def __init__(self, torch):
        super().__init__(torch)
        self.mps = torch.mps
        self._peak_allocated = 0
        self._peak_reserved = 0

    def name(self) -> str:
        return f"Apple MPS ({platform.machine() or 'arm64'}) via devshim"

    def processor_count(self) -> int:
        return os.cpu_count() or 1

    def bf16_supported(self, including_emulation: bool) -> bool:
        try:
            x = self.torch.ones(1, dtype=self.torch.bfloat16, device="mps")
            return bool((x + x).item() == 2)
        except Exception:
            return False

    def total_memory(self) -> int:
        try:
            return int(self.mps.recommended_max_memory())
        except Exception:
            return _host_memory()[0]

    def free_memory(self) -> int:
        return max(0, self.total_memory() - self.reserved())

    def allocated(self) -> int:
        value = int(self.mps.current_allocated_memory())
        self._peak_allocated = max(self._peak_allocated, value)
        return value

    def reserved(self) -> int:
        value = int(self.mps.driver_allocated_memory())
        self._peak_reserved = max(self._peak_reserved, value)
        return value

    def peak_allocated(self) -> int:
        return max(self._peak_allocated, self.allocated())

    def peak_reserved(self) -> int:
        return max(self._peak_reserved, self.reserved())

    def reset_peaks(self) -> None:
        self._peak_allocated = int(self.mps.current_allocated_memory())
        self._peak_reserved = int(self.mps.driver_allocated_memory())

    def empty_cache(self) -> None:
        self.mps.empty_cache()

    def set_memory_fraction(self, fraction: float) -> None:
        self.mps.set_per_process_memory_fraction(fraction)
        self._fraction = fraction

    def synchronize(self) -> None:
        self.mps.synchronize()

    def timing_event(self, enable_timing: bool):
        event_type = getattr(self.mps, "Event", None)
        return None if event_type is None else event_type(enable_timing=enable_timing)

    def generator(self):
        getter = getattr(self.mps, "_get_default_mps_generator", None)
        return getter() if getter is not None else self.torch.default_generator

    def manual_seed(self, seed: int) -> None:
        self.mps.manual_seed(int(seed))

    def seed(self) -> None:
        self.mps.seed()

    def initial_seed(self) -> int:
        return self.generator().initial_seed()

    def get_rng_state(self):
        return self.mps.get_rng_state()

    def set_rng_state(self, state) -> None:
        self.mps.set_rng_state(state)


def for_device(torch, device_type: str, cpu_memory: int | None = None):
    """The backend of a device type other than CUDA ("cpu" or "mps"); cpu_memory: the CPU's size
    as a device (TORCHDEVICE_CPU_MEMORY), None for the host's memory."""
    return MpsBackend(torch) if device_type == "mps" else CpuBackend(torch, cpu_memory)
