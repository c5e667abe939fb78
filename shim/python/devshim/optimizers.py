"""torch's optimizers with ``capturable=True``, while the device used is not CUDA (masquerade only).

``capturable=True`` keeps an optimizer's step counters on the parameters' device so that its step
can be captured in a CUDA graph; torch accepts it only for parameters on the devices its
``torch.optim.optimizer._get_capturable_supported_devices()`` lists (cuda, xpu, hpu, the private
backend, xla) and asserts otherwise at the first ``step()``: "If capturable=True, params and
state_steps must be on supported devices". CUDA code that sets it then fails on the device a
"cuda" request lands on. Each optimizer module imports that function by name, so each module's
binding is replaced by one that adds the device used to torch's list. The capturable code path
is plain tensor arithmetic: on the CPU, Adam, AdamW, NAdam, RAdam, Adamax, ASGD, Adadelta,
RMSprop and Rprop give the same parameters with ``capturable`` True and False, for-each or not
(tests/shim/test_optimizers.py). Nothing is recorded: no request is rewritten. TorchScript code
that calls the function (torch.distributed.optim scripts torch's optimizer functions at import)
gets torch's own list, as without devshim (``_supported_devices``).
"""

from __future__ import annotations

import sys

from devshim import runtime
from devshim.patching import MASQUERADE, Patch, wraps

__all__ = ["plan"]

_NAME = "_get_capturable_supported_devices"


def _supported_devices(original):
    """The replacement. TorchScript (which compiles torch's optimizer functions when
    torch.distributed.optim is imported) reads a function's source through ``__wrapped__``, so
    it compiles torch's own, resolving its names (``torch``) in this closure: scripted code gets
    torch's list, as without devshim."""
    import torch

    @wraps(original)
    def supported(*args, **kwargs):
        found = original(*args, **kwargs)
        # (is_scripting() is False here: it names ``torch``, so that ``torch`` is in this
        # closure, where TorchScript resolves the source of torch's function it compiles.)
        if runtime.used_type not in found and not torch.jit.is_scripting():
            found.append(runtime.used_type)
        return found

    return supported


def plan(torch):
    base = sys.modules.get("torch.optim.optimizer")
    original = getattr(base, _NAME, None)
    if original is None:
        return []
    holders = [module for name, module in sorted(sys.modules.items())
               if name.startswith("torch.optim.") and getattr(module, _NAME, None) is original]
    return [Patch(module, _NAME, _supported_devices, (), when=MASQUERADE) for module in holders]
