"""Libraries outside torch whose own check refuses a device the policy built (``redirect``).

Under ``TORCHDEVICE_DEVICE_OBJECTS=redirect`` (and ``redirect-indexed`` for an index that exists)
``torch.device("cuda", 0)`` is the CPU's device object (devshim/devices.py). A library that builds
such an object for its accelerator and then refuses it for not being of type "cuda" cannot run at
all under the default, whatever its tensors would do. One such check is carried here:

- Lightning's ``CUDAAccelerator.setup_device(device)`` (``lightning.pytorch``,
  ``lightning.fabric`` and their standalone packages ``pytorch_lightning`` and ``lightning_fabric``)
  raises ``MisconfigurationException: Device should be GPU, got cpu instead`` for the root device
  its strategy built as ``torch.device("cuda", i)``: every ``Trainer(accelerator="gpu")`` and
  ``Fabric(accelerator="cuda")``. While masquerading, a device of the type used (the CPU's, or
  MPS') is handed to Lightning's method as ``torch.device("cuda")`` (the current device), so
  that its check passes and its CUDA set-up (matmul precision, ``torch.cuda.set_device``) goes
  to the masquerade; the strategy keeps the object it built, and the model and batches go where
  that object says (the device used). Recorded as API ``lightning CUDAAccelerator.setup_device``.
  The type, not the object's provenance (``devices.built_from_request``), decides: a strategy
  pickled into the processes of ``strategy="ddp_spawn"`` brings its root device back as a new
  ``device(type='cpu')``. Under the masquerade "the GPU" is the device used, so a CPU device
  given to a CUDA accelerator runs where every CUDA request runs; a device of another type
  (``meta``) is still refused, as Lightning means.

Each patch is installed when its module is imported (devshim.after_import), only while the shim
masquerades with a device-object policy that redirects, and removed by ``devshim.deactivate()``
like torch's. Contract: ``watch()`` registers the imports to wait for; it imports nothing.
"""

from __future__ import annotations

from devshim import devices, patching, record, runtime
from devshim.log import logger
from devshim.patching import MASQUERADE, Patch, wraps

__all__ = ["LIGHTNING_ACCELERATOR_MODULES", "watch"]

# The modules that define a CUDAAccelerator with Lightning's check, in its unified package and
# in the standalone packages of the same code.
LIGHTNING_ACCELERATOR_MODULES = (
    "lightning.pytorch.accelerators.cuda",
    "lightning.fabric.accelerators.cuda",
    "pytorch_lightning.accelerators.cuda",
    "lightning_fabric.accelerators.cuda",
)
LIGHTNING_API = "lightning CUDAAccelerator.setup_device"


def _setup_device(original):
    @wraps(original)
    def setup_device(self, device, *args, **kwargs):
        if getattr(device, "type", None) == runtime.used_type != "cuda":
            record.hit(LIGHTNING_API, "cuda", str(device))
            device = devices.as_written("cuda")  # no index: the device object says none
        return original(self, device, *args, **kwargs)

    return setup_device


def _patch_lightning(module) -> None:
    cls = getattr(module, "CUDAAccelerator", None)
    if cls is None or "setup_device" not in vars(cls):
        logger.error("%s: no CUDAAccelerator.setup_device to patch", module.__name__)
        return
    # Another Lightning version that refuses the patch keeps its check as written.
    patching.install_or_log(Patch(cls, "setup_device", _setup_device, (LIGHTNING_API,),
                                  when=MASQUERADE, calls_original=True))


def watch() -> None:
    """Patches each library's check when (or, if it already is, as soon as) it is imported, while
    the shim masquerades with a device-object policy that redirects (the activation's settings:
    deactivate() drops what is still waiting)."""
    if not (runtime.masquerading and devices.redirect_objects):
        return
    import devshim

    for name in LIGHTNING_ACCELERATOR_MODULES:
        devshim.after_import(name, _patch_lightning)
