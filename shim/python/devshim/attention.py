"""Scaled-dot-product attention kernels chosen by name, while the device used is not CUDA
(masquerade only).

``torch.nn.attention.sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION])`` (and the deprecated
``torch.backends.cuda.sdp_kernel(enable_mem_efficient=True, enable_flash=False,
enable_math=False)``, which calls it) restricts ``scaled_dot_product_attention`` to the kernels
named. CUDA code names CUDA's: memory-efficient attention and cuDNN attention exist only there,
so on the device used nothing is left to run ("No viable backend for scaled_dot_product_attention
was found"). When the kernels named include one of those and none that the device used has,
the device used's own are enabled beside them: FLASH_ATTENTION (the CPU's fused kernel) and MATH
(every device's), in that order after the program's, so the fused kernel runs where it can.
Recorded as API ``torch.nn.attention.sdpa_kernel``, requested "cuda". The flags read inside the
block (``torch.backends.cuda.flash_sdp_enabled()``) then say True for those two. A program that
names a kernel the device used has (FLASH_ATTENTION, MATH) gets exactly what it named.

The patch is on ``torch.nn.attention._sdpa_kernel``, the setter both context managers (and the
restore when they exit) go through.
"""

from __future__ import annotations

from devshim import record, runtime
from devshim.patching import MASQUERADE, Patch, wraps

__all__ = ["plan"]

API = "torch.nn.attention.sdpa_kernel"


def _set_kernels(torch):
    backend = torch.nn.attention.SDPBackend
    cuda_only = {backend.EFFICIENT_ATTENTION, backend.CUDNN_ATTENTION}
    available = [backend.FLASH_ATTENTION, backend.MATH]

    def make(original):
        @wraps(original)
        def _sdpa_kernel(backends, set_priority=False):
            chosen = list(backends)
            if (any(b in cuda_only for b in chosen)
                    and not any(b in available for b in chosen)):
                record.hit(API, "cuda", runtime.used)
                chosen += available
            return original(chosen, set_priority)

        return _sdpa_kernel

    return make


def plan(torch):
    attention = getattr(getattr(torch, "nn", None), "attention", None)
    if attention is None or not callable(getattr(attention, "_sdpa_kernel", None)):
        return []
    return [Patch(attention, "_sdpa_kernel", _set_kernels(torch), (API,), when=MASQUERADE)]
