"""Multi-process and multi-device code, while the device used is not CUDA.

- ``torch.distributed.init_process_group(backend=...)`` and ``new_group(backend=...)``: NCCL
  needs CUDA, so "nccl" becomes "gloo"; a per-device string such as "cuda:nccl,cpu:gloo" keeps its
  non-CUDA entries ("cpu:gloo"), and when nothing else is left the answer is "gloo". A
  ``device_id`` naming a CUDA device is dropped (gloo binds to no device), and so is one naming
  the device used: with TORCHDEVICE_DEVICE_OBJECTS=redirect, ``torch.device("cuda", 0)`` already
  is the device used (devshim/devices.py).
- ``torch.distributed.barrier(device_ids=[...])``: the ids name CUDA devices; they are dropped.
- ``DistributedDataParallel(module, device_ids=[i], output_device=i)``: for a module on the
  device used, torch requires ``device_ids=None``; both are dropped.
- ``torch.nn.DataParallel(module, ...)``: as on a machine with one GPU, its one device:
  ``device_ids == [0]``, ``output_device == 0``, ``src_device_obj`` is ``torch.device("cuda", 0)``
  as the device-object policy builds it (subclasses read ``device_ids[0]``: torch_geometric's);
  forward calls the module with the inputs on the device used (torch scatters them to device 0;
  its scatter and gather are CUDA's own).
- ``torch.nn.parallel.scatter``/``gather`` (``scatter_kwargs``, captum's layer attributions with
  ``device_ids``) and ``torch.cuda.comm.scatter``/``gather``: every target device is the one
  device, the device used. Scatter splits as torch does (``chunk_sizes``, else equal chunks along
  ``dim``), each chunk a copy on the device used, with no copy stream (torch makes one per CUDA
  device); gather concatenates on the device used, or on the CPU when asked for it (-1, "cpu").
  Both keep torch's autograd: scatter's gradient is a gather and the other way round.
  ``replicate``/``Broadcast`` and the functional ``data_parallel`` are not carried.

gloo has no MPS collectives: on MPS, collectives on MPS tensors fail in torch, as without devshim.
"""

from __future__ import annotations

import inspect

from devshim import record, runtime
from devshim.patching import MASQUERADE, Patch, wraps

__all__ = ["plan", "translate_backend"]


def translate_backend(backend):
    """The backend string to use instead of ``backend`` without CUDA (None: leave it)."""
    if not isinstance(backend, str):
        return None
    text = backend.strip()
    if "nccl" not in text.lower():
        return None
    if ":" not in text:
        return "gloo"
    kept = []
    for part in text.split(","):
        device, _, name = part.strip().partition(":")
        if device.strip().lower() == "cuda":
            continue
        name = "gloo" if name.strip().lower() == "nccl" else name.strip()
        kept.append(f"{device.strip()}:{name}")
    if not kept:
        return "gloo"
    return ",".join(kept)


def _is_cuda_device(device_id):
    if device_id is None:
        return False
    if type(device_id) is int:
        return True
    return getattr(device_id, "type", str(device_id).split(":", 1)[0]) == "cuda"


def _bound_call(api, original, rewrite):
    """A wrapper binding the call to ``original``'s signature, then letting ``rewrite`` edit it."""
    signature = inspect.signature(original)

    @wraps(original)
    def wrapper(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return original(*args, **kwargs)  # let torch report the bad call
        requested = rewrite(bound.arguments)
        if requested is not None:
            record.hit(api, requested, runtime.used)
        return original(*bound.args, **bound.kwargs)

    return wrapper


def _group_rewrite(arguments):
    requested = None
    backend = arguments.get("backend")
    new = translate_backend(backend)
    if new is not None:
        arguments["backend"] = new
        requested = backend
    device_id = arguments.get("device_id")
    if _is_cuda_device(device_id) or getattr(device_id, "type", None) == runtime.used_type:
        requested = requested or runtime.requested_text(arguments["device_id"])
        arguments["device_id"] = None
    return requested


def _barrier_rewrite(arguments):
    if arguments.get("device_ids"):
        ids = arguments["device_ids"]
        arguments["device_ids"] = None
        return f"cuda:{ids[0]}" if isinstance(ids, (list, tuple)) and ids else "cuda"
    return None


def _ddp_rewrite(arguments):
    requested = None
    ids = arguments.get("device_ids")
    if ids:
        first = ids[0]
        requested = f"cuda:{first}" if type(first) is int else runtime.requested_text(first)
        arguments["device_ids"] = None
    if arguments.get("output_device") is not None:
        arguments["output_device"] = None
        requested = requested or "cuda"
    return requested


def _maker(api, rewrite):
    def make(original):
        return _bound_call(api, original, rewrite)

    return make


def _data_parallel_init(original):
    @wraps(original)
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        import torch

        torch.nn.Module.__init__(self)
        self.module = module
        self.device_ids = [0]
        self.dim = dim
        self.output_device = 0
        self.src_device_obj = torch.device("cuda", 0)  # built as the device policy says
        record.hit("torch.nn.DataParallel", "cuda", runtime.used)

    return __init__


def _data_parallel_forward(original):
    import torch  # once, not per forward

    @wraps(original)
    def forward(self, *inputs, **kwargs):
        with torch.autograd.profiler.record_function("DataParallel.forward"):
            if runtime.used_type != "cpu":  # one device: the inputs go where the module is
                inputs, kwargs = torch.utils._pytree.tree_map_only(
                    torch.Tensor, lambda t: t.to(runtime.used), (inputs, kwargs))
            return self.module(*inputs, **kwargs)

    return forward


def _chunks(tensor, count, chunk_sizes, dim):
    """torch.cuda.comm.scatter's split, every chunk a contiguous copy on the device used."""
    import torch

    pieces = (tensor.split(list(chunk_sizes), dim) if chunk_sizes is not None
              else tensor.chunk(count, dim))
    return tuple(p.clone(memory_format=torch.contiguous_format).to(runtime.used) for p in pieces)


def _joined(tensors, dim, destination):
    """torch.cuda.comm.gather's concatenation, on the CPU when destination says so."""
    import torch

    out = torch.cat([t.to(runtime.used) for t in tensors], dim)
    cpu = destination == "cpu" or destination == -1 or (
        isinstance(destination, torch.device) and destination.type == "cpu")
    return out.cpu() if cpu else out


def _scatter_forward(original):
    @wraps(original)
    def forward(ctx, target_gpus, chunk_sizes, dim, input):
        ctx.dim = dim
        ctx.input_device = input.get_device() if input.device.type != "cpu" else -1
        record.hit("torch.nn.parallel.scatter", "cuda", runtime.used)
        return _chunks(input, len(target_gpus), chunk_sizes, dim)

    return forward


def _gather_forward(original):
    import warnings

    @wraps(original)
    def forward(ctx, target_device, dim, *inputs):
        ctx.target_device = target_device
        ctx.dim = dim
        ctx.input_gpus = tuple(0 for _ in inputs)  # the one device
        ctx.unsqueezed_scalar = bool(inputs) and all(t.dim() == 0 for t in inputs) and dim == 0
        if ctx.unsqueezed_scalar:
            inputs = tuple(t.view(1) for t in inputs)
            warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                          "scalars; will instead unsqueeze and return a vector.", stacklevel=2)
        ctx.input_sizes = tuple(i.size(ctx.dim) for i in inputs)
        record.hit("torch.nn.parallel.gather", "cuda", runtime.used)
        return _joined(inputs, dim, target_device)

    return forward


def _comm_scatter(original):
    @wraps(original)
    def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
        if out is not None:
            return original(tensor, devices, chunk_sizes, dim, streams, out=out)
        record.hit("torch.nn.parallel.comm.scatter", "cuda", runtime.used)
        return _chunks(tensor, len(devices), chunk_sizes, dim)

    return scatter


def _comm_gather(original):
    @wraps(original)
    def gather(tensors, dim=0, destination=None, *, out=None):
        if out is not None:
            return original(tensors, dim, destination, out=out)
        record.hit("torch.nn.parallel.comm.gather", "cuda", runtime.used)
        return _joined(tensors, dim, destination)

    return gather


def plan(torch):
    patches = []
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available():
        c10d = dist.distributed_c10d
        for name, rewrite in (("init_process_group", _group_rewrite), ("new_group", _group_rewrite),
                              ("barrier", _barrier_rewrite)):
            api = f"torch.distributed.{name}"
            for owner in (dist, c10d):
                if hasattr(owner, name):
                    patches.append(Patch(owner, name, _maker(api, rewrite), (api,),
                                         when=MASQUERADE))
        ddp = torch.nn.parallel.DistributedDataParallel
        patches.append(Patch(ddp, "__init__",
                             _maker("torch.nn.parallel.DistributedDataParallel", _ddp_rewrite),
                             ("torch.nn.parallel.DistributedDataParallel",), when=MASQUERADE))
    for name, make in (("__init__", _data_parallel_init), ("forward", _data_parallel_forward)):
        patches.append(Patch(torch.nn.DataParallel, name, make, ("torch.nn.DataParallel",),
                             when=MASQUERADE))
    functions = torch.nn.parallel._functions
    patches.append(Patch(functions.Scatter, "forward", _scatter_forward,
                         ("torch.nn.parallel.scatter",),
                         when=MASQUERADE))
    patches.append(Patch(functions.Gather, "forward", _gather_forward,
                         ("torch.nn.parallel.gather",), when=MASQUERADE))
    comm = torch.nn.parallel.comm
    cuda_comm = getattr(torch.cuda, "comm", None)
    for name, make in (("scatter", _comm_scatter), ("gather", _comm_gather)):
        for owner in (comm, cuda_comm):
            if owner is not None and hasattr(owner, name):
                patches.append(Patch(owner, name, make, (f"torch.nn.parallel.comm.{name}",),
                                     when=MASQUERADE))
    return patches
