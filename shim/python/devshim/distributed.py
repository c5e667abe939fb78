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
- ``torch.nn.parallel.replicate`` (``Broadcast``, ``ReduceAddCoalesced``; DataParallel subclasses
  that replicate, parallel_apply and gather themselves) and ``torch.cuda.comm.broadcast``,
  ``broadcast_coalesced``, ``reduce_add``, ``reduce_add_coalesced``: every target device is the
  device used. As torch does on one GPU, the first target's copies are the tensors themselves
  (moved to the device used when elsewhere), any further target's are clones; a reduction sums
  on the device used. Autograd as torch's: broadcast's gradient is a reduction, and the other
  way round.
- ``torch.nn.parallel.data_parallel(module, inputs, ...)``: as on one GPU, the module runs once
  on its inputs scattered to the device used. torch requires the module's parameters and buffers
  on ``device_ids[0]``, read as the device used (torch builds ``torch.device("cuda", 0)``, which
  the default device-object policy leaves as it is).

gloo has no MPS collectives: on MPS, collectives on MPS tensors fail in torch, as without devshim.
"""

from __future__ import annotations

import functools
import inspect
import sys
from itertools import chain

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


def _copies(tensors, count):
    """torch.cuda.comm.broadcast_coalesced's copies for ``count`` targets, all the device used:
    the first target's are the tensors themselves (torch's on one GPU), the others' are clones."""
    if count == 0:
        return []
    first = [t.to(runtime.used) for t in tensors]
    return [first] + [[t.clone() for t in first] for _ in range(count - 1)]


def _sum(tensors):
    """torch.cuda.comm.reduce_add over tensors of one shape, on the device used."""
    size = tensors[0].size()
    for i, t in enumerate(tensors):
        if t.size() != size:
            got, expected = ("x".join(str(n) for n in s) for s in (t.size(), size))
            raise ValueError(f"input {i} has invalid size: got {got}, but expected {expected}")
    return functools.reduce(lambda a, b: a + b, (t.to(runtime.used) for t in tensors))


def _sums(groups):
    """torch.cuda.comm.reduce_add_coalesced: one sum per position over the groups."""
    return tuple(_sum(column) for column in zip(*groups, strict=True))


def _broadcast_forward(original):
    @wraps(original)
    def forward(ctx, target_gpus, *inputs):
        ctx.target_gpus = [0 for _ in target_gpus]  # the one device
        if len(inputs) == 0:
            return ()
        ctx.num_inputs = len(inputs)
        ctx.input_device = 0
        record.hit("torch.nn.parallel.replicate", "cuda", runtime.used)
        outputs = _copies(inputs, len(target_gpus))
        non_differentiables = []
        for idx, requires_grad in enumerate(ctx.needs_input_grad[1:]):
            if not requires_grad:
                non_differentiables.extend(output[idx] for output in outputs)
        ctx.mark_non_differentiable(*non_differentiables)
        return tuple(chain.from_iterable(outputs))

    return forward


def _reduce_add_coalesced_forward(original):
    @wraps(original)
    def forward(ctx, destination, num_inputs, *grads):
        ctx.target_gpus = [0 for _ in range(0, len(grads), num_inputs)]
        record.hit("torch.nn.parallel.replicate", "cuda", runtime.used)
        return _sums([grads[i:i + num_inputs] for i in range(0, len(grads), num_inputs)])

    return forward


def _comm_broadcast(original):
    @wraps(original)
    def broadcast(tensor, devices=None, *, out=None):
        if not ((devices is None) ^ (out is None)):
            raise RuntimeError("Exactly one of 'devices' and 'out' must be specified, "
                               f"but got devices={devices} and out={out}")
        record.hit("torch.nn.parallel.comm.broadcast", "cuda", runtime.used)
        if out is None:
            return tuple(copies[0] for copies in _copies([tensor], len(devices)))
        for target in out:
            target.copy_(tensor)
        return tuple(out)

    return broadcast


def _comm_broadcast_coalesced(original):
    @wraps(original)
    def broadcast_coalesced(tensors, devices, buffer_size=10485760):
        record.hit("torch.nn.parallel.comm.broadcast_coalesced", "cuda", runtime.used)
        return _copies(list(tensors), len(list(devices)))

    return broadcast_coalesced


def _comm_reduce_add(original):
    @wraps(original)
    def reduce_add(inputs, destination=None):
        record.hit("torch.nn.parallel.comm.reduce_add", "cuda", runtime.used)
        return _sum(list(inputs))

    return reduce_add


def _comm_reduce_add_coalesced(original):
    @wraps(original)
    def reduce_add_coalesced(inputs, destination=None, buffer_size=10485760):
        record.hit("torch.nn.parallel.comm.reduce_add_coalesced", "cuda", runtime.used)
        return _sums([list(group) for group in inputs])

    return reduce_add_coalesced


def _data_parallel_function(original):
    @wraps(original)
    def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                      module_kwargs=None):
        from torch.nn.parallel.scatter_gather import scatter_kwargs

        if not isinstance(inputs, tuple):
            inputs = (inputs,) if inputs is not None else ()
        for t in chain(module.parameters(), module.buffers()):
            if t.device.type != runtime.used_type:
                raise RuntimeError("module must have its parameters and buffers on device "
                                   f"{runtime.used} (device_ids[0]) but found one of them on "
                                   f"device: {t.device}")
        record.hit("torch.nn.parallel.data_parallel", "cuda", runtime.used)
        inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, [0], dim)
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        return module(*inputs[0], **module_kwargs[0])  # one device: torch gathers nothing

    return data_parallel


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
    for cls, make in ((functions.Broadcast, _broadcast_forward),
                      (functions.ReduceAddCoalesced, _reduce_add_coalesced_forward)):
        patches.append(Patch(cls, "forward", make, ("torch.nn.parallel.replicate",),
                             when=MASQUERADE))
    module = sys.modules.get("torch.nn.parallel.data_parallel")
    for owner in (torch.nn.parallel, module):
        if owner is not None and callable(getattr(owner, "data_parallel", None)):
            patches.append(Patch(owner, "data_parallel", _data_parallel_function,
                                 ("torch.nn.parallel.data_parallel",), when=MASQUERADE))
    comm = torch.nn.parallel.comm
    cuda_comm = getattr(torch.cuda, "comm", None)
    for name, make in (("scatter", _comm_scatter), ("gather", _comm_gather),
                       ("broadcast", _comm_broadcast),
                       ("broadcast_coalesced", _comm_broadcast_coalesced),
                       ("reduce_add", _comm_reduce_add),
                       ("reduce_add_coalesced", _comm_reduce_add_coalesced)):
        for owner in (comm, cuda_comm):
            if owner is not None and hasattr(owner, name):
                patches.append(Patch(owner, name, make, (f"torch.nn.parallel.comm.{name}",),
                                     when=MASQUERADE))
    return patches
