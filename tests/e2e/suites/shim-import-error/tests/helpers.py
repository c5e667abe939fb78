"""A module that imports fine without the shim and raises at import with it, as a real project's
module did (issue 32: torch.distributed.optim raised TypeError under the shim)."""
import os


def _import_optimizers():
    if os.environ.get("ACTIVATE_TORCH_DEVICE"):
        raise TypeError("the shim's device object cannot be scripted")


_import_optimizers()


def double(x):
    return 2 * x
