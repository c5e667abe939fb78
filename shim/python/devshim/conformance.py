"""Conformance with torch's machinery, derived from the patch registry.

``python -m devshim conformance`` takes every public API the shim patches (``patches.plan``, so a
new patch is covered without a test written for it), calls it from a small function, and runs
that function eagerly and under each of torch's machineries: TorchScript (``jit.script``),
tracing (``jit.trace``), ``fx.symbolic_trace``, ``torch.compile`` (``fullgraph=True``, backend
``aot_eager``: Dynamo and AOTAutograd, without Inductor's code generation) and ``torch.export``
(not strict). It does so in two child processes, without and with the shim, and compares:

- **A ``cuda`` request is redirected under every machinery**: the ``cuda`` form of a call with
  a ``cpu`` form gives, with the shim, the outcome of its ``cpu`` form without the shim (the same
  result, or refused both ways) under every machinery, TorchScript included (devices written in
  scripted code are rewritten when it is compiled: devshim/scripted.py).
- **A masquerade call** (no ``cpu`` form: torch.cuda answering for the device used) gives its
  eager result with the shim under every machinery that runs Python, except where the machinery
  refuses the call without the shim too; under TorchScript, which never calls Python, its
  outcome is the one without the shim (the shim must not make TorchScript reject what it
  accepts, which it did before issue 31).
- **Nothing changes where nothing is redirected**: the ``cpu`` form of a call gives the same
  outcome with and without the shim, under every machinery.

A sample is the body of ``def f(x)`` with ``{d}`` for the device (``cuda``, and ``cpu`` for the
form that says the same on the CPU without devshim) and ``{legacy}`` for the legacy types'
module (``cuda``, ``torch`` itself for the cpu form), or a {"cuda": body, "cpu": body} pair where
the cpu form is another call (``x.cuda()``: ``x.cpu()``), or a cuda form only (the masquerade:
torch.cuda answering for the device used has no cpu form). It is derived from the API's name for
the factories (``torch.<name>(2, 3, device=...)`` or ``(x, device=...)`` for ``*_like``) and
written below for the rest. An API
with no sample and no reason to be left out fails the check (``missing``), and so does a sample
that does not run eagerly with the shim (``broken sample``).

Contracts: ``run(mode)`` (in the child) prints one JSON document: {api: {variant: {machinery:
outcome}}}, an outcome being ["ok", summary] or ["error", exception type, message]; summaries of
tensors hold shape, dtype, device type and values (seeded, so random factories compare too).
``compare(plain, shimmed)`` returns the list of problems, each a line naming the API, variant and
machinery. ``main`` exits 0 when there is none, 1 otherwise.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import warnings

__all__ = ["SAMPLES", "CUDA_ONLY", "LEFT_OUT", "samples_for", "run", "compare", "main"]

MACHINERY = ("eager", "script", "trace", "fx", "compile", "export")
TENSOR_ONLY = ("trace", "export")  # machineries that need tensors out


def _setting_sample(setter: str, getter: str) -> str:
    """The sample of a torch.cuda.tunable setter: set, read back, and put the old value back."""
    return f"""
        old = torch.cuda.tunable.{getter}
        torch.cuda.tunable.{setter}
        y = torch.cuda.tunable.{getter}
        torch.cuda.tunable.{setter.split('(')[0]}(old)
        return y"""


def _autocast_sample(cuda_block: str, cpu_block: str) -> dict:
    """The sample of an autocast spelling: a product inside ``with cuda_block:`` (the CPU form:
    ``cpu_block``)."""
    body = """
        with {}:
            y = torch.mm(x.reshape(2, 1), x.reshape(1, 2))
        return y"""
    return {"cuda": body.format(cuda_block), "cpu": body.format(cpu_block)}


# Samples of the APIs whose call cannot be derived from their name: a body with "{d}" (and
# "{legacy}") for both forms, or {"cuda": body, "cpu": body}.
SAMPLES = {
    "torch.set_autocast_dtype": """
        old = torch.get_autocast_dtype('{d}')
        torch.set_autocast_dtype('{d}', torch.float16)
        y = str(torch.get_autocast_dtype('{d}'))
        torch.set_autocast_dtype('{d}', old)
        return y""",
    "torch.set_autocast_enabled": """
        torch.set_autocast_enabled('{d}', True)
        y = torch.is_autocast_enabled('{d}')
        torch.set_autocast_enabled('{d}', False)
        return y""",
    "torch.arange": "return torch.arange(4, device='{d}')",
    "torch.as_tensor": "return torch.as_tensor([1.0, 2.0], device='{d}')",
    "torch.asarray": "return torch.asarray([1.0, 2.0], device='{d}')",
    "torch.bartlett_window": "return torch.bartlett_window(4, device='{d}')",
    "torch.blackman_window": "return torch.blackman_window(4, device='{d}')",
    "torch.hamming_window": "return torch.hamming_window(4, device='{d}')",
    "torch.hann_window": "return torch.hann_window(4, device='{d}')",
    "torch.kaiser_window": "return torch.kaiser_window(4, device='{d}')",
    "torch.empty": "return torch.empty(2, 3, device='{d}').fill_(1.0)",
    "torch.empty_like": "return torch.empty_like(x, device='{d}').fill_(1.0)",
    "torch.empty_permuted": "return torch.empty_permuted((2, 3), (1, 0), device='{d}').fill_(1.0)",
    "torch.empty_strided": "return torch.empty_strided((2, 3), (3, 1), device='{d}').fill_(1.0)",
    "torch.eye": "return torch.eye(3, device='{d}')",
    "torch.fft.fftfreq": "return torch.fft.fftfreq(4, device='{d}')",
    "torch.fft.rfftfreq": "return torch.fft.rfftfreq(4, device='{d}')",
    "torch.from_file": "return torch.from_file(FILE, size=4, device='{d}')",
    "torch.full": "return torch.full((2, 3), 1.5, device='{d}')",
    "torch.full_like": "return torch.full_like(x, 1.5, device='{d}')",
    "torch.linspace": "return torch.linspace(0, 1, 4, device='{d}')",
    "torch.logspace": "return torch.logspace(0, 1, 4, device='{d}')",
    "torch.nested.nested_tensor":
        "return torch.nested.nested_tensor([x, x], device='{d}').to_padded_tensor(0.0)",
    "torch.normal": "return torch.normal(0.0, 1.0, (2, 3), device='{d}')",
    "torch.randint": "return torch.randint(0, 5, (2, 3), device='{d}')",
    "torch.randint_like": "return torch.randint_like(x, 5, device='{d}')",
    "torch.randperm": "return torch.randperm(4, device='{d}')",
    "torch.range": "return torch.range(0, 3, device='{d}')",
    "torch.scalar_tensor": "return torch.scalar_tensor(1.5, device='{d}')",
    "torch.sparse_coo_tensor":
        "return torch.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,), device='{d}').to_dense()",
    "torch.sparse_csr_tensor":
        "return torch.sparse_csr_tensor([0, 1, 2], [0, 1], [1.0, 2.0], (2, 2), "
        "device='{d}').to_dense()",
    "torch.sparse_csc_tensor":
        "return torch.sparse_csc_tensor([0, 1, 2], [0, 1], [1.0, 2.0], (2, 2), "
        "device='{d}').to_dense()",
    "torch.sparse_bsr_tensor":
        "return torch.sparse_bsr_tensor([0, 1], [0], [[[1.0]]], (1, 1), device='{d}').to_dense()",
    "torch.sparse_bsc_tensor":
        "return torch.sparse_bsc_tensor([0, 1], [0], [[[1.0]]], (1, 1), device='{d}').to_dense()",
    "torch.sparse_compressed_tensor":
        "return torch.sparse_compressed_tensor([0, 1, 2], [0, 1], [1.0, 2.0], (2, 2), "
        "layout=torch.sparse_csr, device='{d}').to_dense()",
    "torch.tensor": "return torch.tensor([1.0, 2.0], device='{d}')",
    "torch.tril_indices": "return torch.tril_indices(3, 3, device='{d}')",
    "torch.triu_indices": "return torch.triu_indices(3, 3, device='{d}')",
    "torch.load": "return torch.load(io.BytesIO(CHECKPOINT), map_location='{d}')",
    "torch.jit.load": "return torch.jit.load(io.BytesIO(ARCHIVE), map_location='{d}')(x)",
    "torch.set_default_device": """
        torch.set_default_device('{d}')
        try:
            y = torch.ones(2)
        finally:
            torch.set_default_device(None)
        return y""",
    "torch.Generator": """
        g = torch.Generator(device='{d}').manual_seed(1)
        return torch.rand(2, generator=g, device='{d}')""",
    "torch.Tensor.cuda": {
        "cuda": "return x.cuda()",
        "cpu": "return x.cpu()",
    },
    "torch.nn.attention.sdpa_kernel": {  # CUDA's kernel named; the CPU's fused kernel
        "cuda": """
            q = x.reshape(1, 1, 2, 1).expand(1, 1, 2, 4).contiguous()
            kernels = [torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION]
            with torch.nn.attention.sdpa_kernel(kernels):
                return torch.nn.functional.scaled_dot_product_attention(q, q, q)
        """,
        "cpu": """
            q = x.reshape(1, 1, 2, 1).expand(1, 1, 2, 4).contiguous()
            kernels = [torch.nn.attention.SDPBackend.FLASH_ATTENTION]
            with torch.nn.attention.sdpa_kernel(kernels):
                return torch.nn.functional.scaled_dot_product_attention(q, q, q)
        """,
    },
    "torch.Tensor.new_empty": "return x.new_empty(2, device='{d}').fill_(1.0)",
    "torch.Tensor.new_empty_strided":
        "return x.new_empty_strided((2,), (1,), device='{d}').fill_(1.0)",
    "torch.Tensor.new_full": "return x.new_full((2,), 1.5, device='{d}')",
    "torch.Tensor.new_ones": "return x.new_ones(2, device='{d}')",
    "torch.Tensor.new_tensor": "return x.new_tensor([1.0, 2.0], device='{d}')",
    "torch.Tensor.new_zeros": "return x.new_zeros(2, device='{d}')",
    "torch.Tensor.to": "return x.to('{d}') + 1",
    "torch.TypedStorage.cuda": "return torch.tensor(x.storage().{d}().tolist())",
    "torch.TypedStorage.to": "return torch.tensor(x.storage().to(device='{d}').tolist())",
    "torch.UntypedStorage.cuda": "return torch.tensor(x.untyped_storage().{d}().size())",
    "torch.UntypedStorage.to": "return torch.tensor(x.untyped_storage().to(device='{d}').size())",
    "torch.amp.GradScaler": "return torch.amp.GradScaler('{d}').scale(x)",
    "torch.cuda.amp.GradScaler": {
        "cuda": "return torch.cuda.amp.GradScaler().scale(x)",
        "cpu": "return torch.amp.GradScaler('cpu').scale(x)",
    },
    # Without a dtype, CUDA autocast casts to float16 and the CPU's to bfloat16: the shim keeps
    # CUDA's, so each CPU form names it.
    "torch.amp.autocast": _autocast_sample("torch.amp.autocast('cuda')",
                                           "torch.amp.autocast('cpu', dtype=torch.float16)"),
    "torch.autocast": _autocast_sample("torch.autocast('cuda')",
                                       "torch.autocast('cpu', dtype=torch.float16)"),
    "torch.cuda.amp.autocast": _autocast_sample("torch.cuda.amp.autocast()",
                                                "torch.autocast('cpu', dtype=torch.float16)"),
    "torch.device": "return torch.ones(2, device=torch.device('{d}')) + x",
    "torch.device.__enter__": """
        with torch.device('{d}'):
            y = torch.ones(2)
        return y + x""",
    "torch.nn.Module.cuda": "return torch.nn.Linear(2, 2).{d}()(x)",
    "torch.nn.Module.to": "return torch.nn.Linear(2, 2).to('{d}')(x)",
    "torch.nn.Module.to_empty":
        "return torch.nn.Linear(2, 2, "
        "device='meta').to_empty(device='{d}').weight.detach().fill_(1.0)",
    "torch.cuda.BFloat16Tensor": "return torch.{legacy}.BFloat16Tensor([1.0, 2.0])",
    "torch.cuda.BoolTensor": "return torch.{legacy}.BoolTensor([True, False])",
    "torch.cuda.ByteTensor": "return torch.{legacy}.ByteTensor([1, 2])",
    "torch.cuda.CharTensor": "return torch.{legacy}.CharTensor([1, 2])",
    "torch.cuda.DoubleTensor": "return torch.{legacy}.DoubleTensor([1.0, 2.0])",
    "torch.cuda.FloatTensor": "return torch.{legacy}.FloatTensor([1.0, 2.0])",
    "torch.cuda.HalfTensor": "return torch.{legacy}.HalfTensor([1.0, 2.0])",
    "torch.cuda.IntTensor": "return torch.{legacy}.IntTensor([1, 2])",
    "torch.cuda.LongTensor": "return torch.{legacy}.LongTensor([1, 2])",
    "torch.cuda.ShortTensor": "return torch.{legacy}.ShortTensor([1, 2])",
    "torch.set_default_tensor_type": """
        torch.set_default_tensor_type(torch.{legacy}.DoubleTensor)
        try:
            y = torch.zeros(2)
        finally:
            torch.set_default_tensor_type(torch.FloatTensor)
        return y""",
    "torch.Tensor.type": "return x.type(torch.{legacy}.DoubleTensor)",
}

# The masquerade (torch.cuda, torch.accelerator & co. answering for the device used): a "cuda"
# form only, since without devshim nothing on the CPU says the same.
CUDA_ONLY = {
    "torch.get_autocast_gpu_dtype": "return str(torch.get_autocast_gpu_dtype())",
    "torch.set_autocast_gpu_dtype": """
        old = torch.get_autocast_gpu_dtype()
        torch.set_autocast_gpu_dtype(torch.float16)
        y = str(torch.get_autocast_gpu_dtype())
        torch.set_autocast_gpu_dtype(old)
        return y""",
    "torch.accelerator.current_accelerator": "return str(torch.accelerator.current_accelerator())",
    "torch.accelerator.current_device_idx": "return torch.accelerator.current_device_idx()",
    "torch.accelerator.current_device_index": "return torch.accelerator.current_device_index()",
    "torch.accelerator.current_stream": "return type(torch.accelerator.current_stream()).__name__",
    "torch.accelerator.device_count": "return torch.accelerator.device_count()",
    "torch.accelerator.device_index": """
        with torch.accelerator.device_index(0):
            y = x + 1
        return y""",
    "torch.accelerator.empty_cache": "return torch.accelerator.empty_cache()",
    "torch.accelerator.empty_host_cache": "return torch.accelerator.empty_host_cache()",
    "torch.accelerator.get_device_capability":
        "return sorted(str(t) for t in "
        "torch.accelerator.get_device_capability()['supported_dtypes'])",
    "torch.accelerator.get_memory_info": "return len(torch.accelerator.get_memory_info())",
    "torch.accelerator.is_available": "return torch.accelerator.is_available()",
    "torch.accelerator.max_memory_allocated":
        "return torch.accelerator.max_memory_allocated() >= 0",
    "torch.accelerator.max_memory_reserved": "return torch.accelerator.max_memory_reserved() >= 0",
    "torch.accelerator.memory_allocated": "return torch.accelerator.memory_allocated() >= 0",
    "torch.accelerator.memory_reserved": "return torch.accelerator.memory_reserved() >= 0",
    "torch.accelerator.memory_stats":
        "return 'allocated_bytes.all.current' in torch.accelerator.memory_stats()",
    "torch.accelerator.reset_accumulated_memory_stats":
        "return torch.accelerator.reset_accumulated_memory_stats()",
    "torch.accelerator.reset_peak_memory_stats":
        "return torch.accelerator.reset_peak_memory_stats()",
    "torch.accelerator.set_device_idx": "return torch.accelerator.set_device_idx(0)",
    "torch.accelerator.set_device_index": "return torch.accelerator.set_device_index(0)",
    "torch.accelerator.set_stream":
        "return torch.accelerator.set_stream(torch.accelerator.current_stream())",
    "torch.accelerator.synchronize": "return torch.accelerator.synchronize()",
    "torch.Event": """
        e = torch.Event(enable_timing=True)
        e.record()
        e.synchronize()
        return e.query()""",
    "torch.Stream": """
        s = torch.Stream()
        s.synchronize()
        return s.query()""",
    "torch.cuda.Event": """
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        e.synchronize()
        return e.query()""",
    "torch.cuda.Stream": """
        s = torch.cuda.Stream()
        s.synchronize()
        return s.query()""",
    "torch.cuda.StreamContext": """
        with torch.cuda.StreamContext(torch.cuda.current_stream()):
            y = x + 1
        return y""",
    "torch.cuda._lazy_init": "return torch.cuda._lazy_init()",
    "torch.cuda.can_device_access_peer": "return torch.cuda.can_device_access_peer(0, 0)",
    "torch.cuda.current_stream": "return type(torch.cuda.current_stream()).__name__",
    "torch.cuda.default_generators": "return len(torch.cuda.default_generators)",
    "torch.cuda.default_stream": "return type(torch.cuda.default_stream()).__name__",
    "torch.cuda.device": """
        with torch.cuda.device(0):
            y = x + 1
        return y""",
    "torch.cuda.device_of": """
        with torch.cuda.device_of(x):
            y = x + 1
        return y""",
    "torch.cuda.get_device_capability": "return torch.cuda.get_device_capability()",
    "torch.cuda.get_device_name": "return torch.cuda.get_device_name().endswith('via devshim')",
    "torch.cuda.get_device_properties":
        "return torch.cuda.get_device_properties(0).total_memory > 0",
    "torch.cuda.get_per_process_memory_fraction":
        "return torch.cuda.get_per_process_memory_fraction()",
    "torch.cuda.get_rng_state": "return torch.cuda.get_rng_state().numel()",
    "torch.cuda.get_rng_state_all": "return len(torch.cuda.get_rng_state_all())",
    "torch.cuda.initial_seed": "return torch.cuda.initial_seed()",
    "torch.cuda.manual_seed": "return torch.cuda.manual_seed(3)",
    "torch.cuda.manual_seed_all": "return torch.cuda.manual_seed_all(3)",
    "torch.cuda.mem_get_info": "return len(torch.cuda.mem_get_info())",
    "torch.cuda.memory_snapshot": "return torch.cuda.memory_snapshot()",
    "torch.cuda.memory_stats": "return 'allocated_bytes.all.current' in torch.cuda.memory_stats()",
    "torch.cuda.memory_stats_as_nested_dict":
        "return 'allocated_bytes' in torch.cuda.memory_stats_as_nested_dict()",
    "torch.cuda.memory_summary": "return type(torch.cuda.memory_summary()).__name__",
    "torch.cuda.nvtx.range": """
        with torch.cuda.nvtx.range('devshim'):
            y = x + 1
        return y""",
    "torch.cuda.nvtx.range_end":
        "return torch.cuda.nvtx.range_end(torch.cuda.nvtx.range_start('a'))",
    "torch.cuda.nvtx.range_start": "return torch.cuda.nvtx.range_start('a') is not None",
    "torch.cuda.set_per_process_memory_fraction":
        "return torch.cuda.set_per_process_memory_fraction(0.5)",
    "torch.cuda.set_rng_state": "return torch.cuda.set_rng_state(torch.cuda.get_rng_state())",
    "torch.cuda.set_rng_state_all":
        "return torch.cuda.set_rng_state_all(torch.cuda.get_rng_state_all())",
    "torch.cuda.set_sync_debug_mode": "return torch.cuda.set_sync_debug_mode(0)",
    "torch.cuda.cudart": "return torch.cuda.cudart().cudaProfilerStart()",
    "torch.cuda.check_error": "return torch.cuda.check_error(0)",
    "torch.cuda.profiler.start": "return torch.cuda.profiler.start()",
    "torch.cuda.profiler.stop": "return torch.cuda.profiler.stop()",
    "torch.cuda.profiler.profile": """
        with torch.cuda.profiler.profile():
            y = x + 1
        return y""",
    "torch.cuda.tunable.enable": _setting_sample("enable(False)", "is_enabled()"),
    "torch.cuda.tunable.tuning_enable": _setting_sample("tuning_enable(False)",
                                                        "tuning_is_enabled()"),
    "torch.cuda.tunable.record_untuned_enable": _setting_sample("record_untuned_enable(False)",
                                                                "record_untuned_is_enabled()"),
    "torch.cuda.tunable.set_max_tuning_duration": _setting_sample("set_max_tuning_duration(7)",
                                                                  "get_max_tuning_duration()"),
    "torch.cuda.tunable.set_max_tuning_iterations": _setting_sample(
        "set_max_tuning_iterations(7)", "get_max_tuning_iterations()"),
    "torch.cuda.tunable.set_filename": _setting_sample("set_filename('devshim.csv')",
                                                       "get_filename()"),
    "torch.cuda.tunable.set_rotating_buffer_size": _setting_sample(
        "set_rotating_buffer_size(0)", "get_rotating_buffer_size()"),
    "torch.cuda.tunable.set_numerical_check_tolerances":
        "return torch.cuda.tunable.set_numerical_check_tolerances(False)",
    "torch.backends.cuda.cufft_plan_cache":
        "return torch.backends.cuda.cufft_plan_cache[torch.device('cuda')].max_size",
    "torch.backends.cuda.cufft_plan_cache.size": "return torch.backends.cuda.cufft_plan_cache.size",
    "torch.backends.cuda.cufft_plan_cache.max_size": """
        cache = torch.backends.cuda.cufft_plan_cache[0]
        old = cache.max_size
        cache.max_size = 7
        y = cache.max_size
        cache.max_size = old
        return y""",
    "torch.backends.cuda.cufft_plan_cache.clear":
        "return torch.backends.cuda.cufft_plan_cache.clear()",
    "torch.cuda.set_stream": "return torch.cuda.set_stream(torch.cuda.current_stream())",
    "torch.cuda.stream": """
        with torch.cuda.stream(torch.cuda.current_stream()):
            y = x + 1
        return y""",
    "torch.get_autocast_dtype": "return str(torch.get_autocast_dtype('cuda'))",
    "torch.get_device_module": "return torch.get_device_module('cuda').__name__",
    "torch.is_autocast_enabled": "return torch.is_autocast_enabled('cuda')",
    "torch.Tensor.is_pinned": "return x.pin_memory().is_pinned()",
    "torch.Tensor.pin_memory": "return x.pin_memory() + 1",
    "torch.Tensor.record_stream": "return x.record_stream(torch.cuda.current_stream())",
    "torch.nn.DataParallel": "return torch.nn.DataParallel(torch.nn.Linear(2, 2))(x)",
    "torch.nn.parallel.scatter": "return torch.nn.parallel.scatter(x, [0])[0] + 1",
    "torch.nn.parallel.gather": "return torch.nn.parallel.gather([x, x + 1], 0)",
    "torch.nn.parallel.comm.scatter": "return torch.nn.parallel.comm.scatter(x, [0, 0])[1]",
    "torch.nn.parallel.comm.gather": "return torch.nn.parallel.comm.gather([x, x], 0, -1)",
    "torch.nn.parallel.comm.broadcast": "return torch.nn.parallel.comm.broadcast(x, [0])[0] + 1",
    "torch.nn.parallel.comm.broadcast_coalesced":
        "return torch.nn.parallel.comm.broadcast_coalesced([x, x + 1], [0])[0][1]",
    "torch.nn.parallel.comm.reduce_add": "return torch.nn.parallel.comm.reduce_add([x], 0) + 1",
    "torch.nn.parallel.comm.reduce_add_coalesced":
        "return torch.nn.parallel.comm.reduce_add_coalesced([[x, x + 1]], 0)[1]",
    "torch.nn.parallel.replicate":
        "return torch.nn.parallel.replicate(torch.nn.Linear(2, 2).cuda(), [0])[0](x)",
    "torch.nn.parallel.data_parallel":
        "return torch.nn.parallel.data_parallel(torch.nn.Linear(2, 2).cuda(), x)",
    "torch._C._nn._parse_to": "return x.to(torch._C._nn._parse_to('{d}', torch.float64)[0]) + 1",
    "torch.utils.data.DataLoader":
        "return next(iter(torch.utils.data.DataLoader([x], pin_memory=True)))",
}

# torch.cuda functions (and torch.cuda.tunable's) that take no argument and answer for the device:
# sample `return f()`.
_NO_ARGUMENT_QUERIES = (
    "current_device", "device_count", "empty_cache", "get_allocator_backend",
    "get_sync_debug_mode", "host_memory_stats_as_nested_dict", "init", "ipc_collect",
    "is_available", "is_bf16_supported",
    "is_current_stream_capturing", "is_initialized", "is_tf32_supported", "max_memory_allocated",
    "max_memory_cached", "max_memory_reserved", "memory_allocated", "memory_cached",
    "memory_reserved", "reset_accumulated_memory_stats", "reset_max_memory_allocated",
    "reset_accumulated_host_memory_stats", "reset_max_memory_cached",
    "reset_peak_host_memory_stats", "reset_peak_memory_stats", "seed", "seed_all", "synchronize",
    # torch.cuda.tunable's
    "get_filename", "get_max_tuning_duration", "get_max_tuning_iterations", "get_results",
    "get_rotating_buffer_size", "get_validators", "is_enabled", "read_file",
    "record_untuned_is_enabled", "tuning_is_enabled")
_VOLATILE = ("memory_allocated", "memory_cached", "memory_reserved")

# torch.cpu's memory queries, which torch lacks and the masquerade adds (devshim/accelerator.py).
CUDA_ONLY.update({
    "torch.cpu.mem_get_info": "return len(torch.cpu.mem_get_info())",
    "torch.cpu.memory_stats": "return 'allocated_bytes.all.current' in torch.cpu.memory_stats()",
    "torch.cpu.empty_cache": "return torch.cpu.empty_cache()",
    **{f"torch.cpu.{name}": f"return torch.cpu.{name}() >= 0"
       for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                    "max_memory_reserved")},
    **{f"torch.cpu.{name}": f"return torch.cpu.{name}()"
       for name in ("reset_peak_memory_stats", "reset_max_memory_allocated",
                    "reset_accumulated_memory_stats")},
})

# APIs checked elsewhere, with why they are not called here.
LEFT_OUT = {
    "torch.jit.script": "every sample runs under it (the 'script' machinery)",
    "torch.distributed.barrier": "needs a process group (tests/shim/test_distributed.py)",
    "torch.distributed.init_process_group": "starts a process group "
                                            "(tests/shim/test_distributed.py)",
    "torch.distributed.new_group": "needs a process group (tests/shim/test_distributed.py)",
    "torch.nn.parallel.DistributedDataParallel": "needs a process group "
                                                 "(tests/shim/test_distributed.py)",
    "torch.cuda.set_device": "selects a device for the rest of the process; "
                             "tests/shim/test_cuda_masquerade.py",
    "torch.cuda.nvtx.mark": "a no-op returning None like nvtx.range_push/range_pop",
    "torch.cuda._sleep": "a no-op (tests/shim/test_cuda_masquerade.py); torch's own needs a CUDA "
                         "build (torch._C._cuda_sleep), so there is no CPU form to compare with",
    "torch._C._cuda_getCurrentRawStream": "a binding only CUDA builds have, read by libraries "
                                           "(tests/shim/test_cuda_masquerade.py): no CPU form "
                                           "to compare with",
    "torch._C._cuda_setStream": "a binding only CUDA builds have, called by torch's test base "
                                "(tests/shim/test_cuda_masquerade.py): no CPU form to compare "
                                "with",
    "torch._C._cuda_getCompiledVersion": "a binding only CUDA builds have, read by torch's "
                                         "test helpers (tests/shim/test_cuda_masquerade.py): no "
                                         "CPU form to compare with",
    "torch._C._cuda_setDevice": "a binding only CUDA builds have, called by torch's test base "
                                "(tests/shim/test_cuda_masquerade.py): no CPU form to compare "
                                "with",
    "torch._C._cuda_cudaCachingAllocator_is_enabled": "a binding only CUDA builds have, asked "
                                                      "by torch.cuda.caching_allocator_disabled "
                                                      "(tests/shim/test_cuda_masquerade.py): no "
                                                      "CPU form to compare with",
    "torch._C._cuda_cudaCachingAllocator_enable": "a binding only CUDA builds have "
                                                  "(tests/shim/test_cuda_masquerade.py): no CPU "
                                                  "form to compare with",
    "torch._C._cuda_clearCublasWorkspaces": "a binding only CUDA builds have, called by torch's "
                                            "test base (tests/shim/test_cuda_masquerade.py): a "
                                            "no-op, no CPU form to compare with",
    "torch.cuda.nvtx.range_push": "a no-op (tests/shim/test_patches.py)",
    "torch.cuda.nvtx.range_pop": "a no-op (tests/shim/test_patches.py)",
}


# Outcomes that differ from the rules for a reason that is not the shim's to fix, by (api,
# machinery): each is printed as known; one that conforms again is reported, so that this list
# cannot outlive what it describes.
KNOWN = {
    ("torch.Tensor.is_pinned", "compile"):
        "Dynamo traces x.pin_memory() and x.is_pinned() into the graph as torch's operators: the "
        "masquerade's pinned mark is not there, so a compiled is_pinned() answers False",
    ("torch.Tensor.type", "compile"):
        "Dynamo takes x.type(T) only for torch's own tensor types: the masquerade's "
        "torch.cuda.DoubleTensor is a Python class (x.type('torch.cuda.DoubleTensor'), a string, "
        "compiles)",
    ("torch.cuda.BoolTensor", "compile"):
        "Dynamo makes an instance of a Python class without calling its metaclass, and the "
        "masquerade's legacy types are classes whose metaclass builds the tensor: torch's own "
        "BoolTensor compiles (its siblings fail to compile with and without devshim)",
    ("torch.cuda.default_generators", "script"):
        "the masquerade's tuple holds a generator, as CUDA's does, and TorchScript cannot use one "
        "as a value (torch's CPU build has an empty tuple, which it can)",
    ("torch.cuda.amp.autocast", "script"):
        "TorchScript's autocast pass takes this class for CUDA whatever it holds (torch.autocast"
        "('cuda') in scripted code is rewritten to the device used: devshim/scripted.py); "
        "without devshim the region is not autocast either",
}
# TorchScript compiles torch's legacy types (torch.FloatTensor(...)) by recognising torch's own C
# classes; the masquerade's are Python classes, whose source it looks for (and so does it for
# torch.cuda.FloatTensor without devshim: refused both ways, where the rules ask for the cpu form).
KNOWN.update({
    (f"torch.cuda.{name}", "script"):
        "TorchScript compiles only torch's own legacy type classes; the masquerade's are Python "
        "classes (torch.cuda's are refused without devshim too)"
    for name in ("BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
                 "HalfTensor", "IntTensor", "LongTensor", "ShortTensor")})


def samples_for(torch, plan):
    """{api: {variant: body}} for every API of ``plan`` that raises nothing ("cuda", and "cpu"
    unless the sample is cuda-only), and the list of APIs with neither a sample nor a reason in
    LEFT_OUT."""
    from devshim.patching import RAISES
    from devshim.tensors import carried_factories

    factories = set(carried_factories(torch))
    samples, missing = {}, []
    for patch in plan:
        if patch.kind == RAISES:
            continue
        for api in patch.apis:
            if api in samples or api in LEFT_OUT:
                continue
            body = SAMPLES.get(api)
            if body is None and api in CUDA_ONLY:
                body = {"cuda": CUDA_ONLY[api]}
            name = api.rsplit(".", 1)[-1]
            if body is None and api == f"torch.{name}" and name in factories:
                body = (f"return torch.{name}(x, device='{{d}}')" if name.endswith("_like")
                        else f"return torch.{name}(2, 3, device='{{d}}')")
            if body is None and api.startswith("torch.cuda.") and name in _NO_ARGUMENT_QUERIES:
                call = f"{api}()"
                body = {"cuda": f"return {call} >= 0" if name in _VOLATILE else f"return {call}"}
            if body is None:
                missing.append(api)
                continue
            if isinstance(body, str):
                body = {"cuda": body, "cpu": body}
            samples[api] = {variant: _form(text, variant) for variant, text in body.items()}
    return samples, sorted(set(missing))


def _form(body, variant):
    """A sample's body for one variant: dedented, placeholders filled."""
    body = textwrap.dedent(body.strip("\n")).strip()
    legacy = "torch.cuda." if variant == "cuda" else "torch."
    return body.replace("{d}", variant).replace("torch.{legacy}.", legacy)


def _summary(torch, value):
    """A comparable description of a result (JSON)."""
    if isinstance(value, torch.Tensor):
        if value.is_nested or value.layout != torch.strided:
            value = value.to_dense() if not value.is_nested else value.to_padded_tensor(0.0)
        values = value.detach().cpu()
        return ["tensor", list(value.shape), str(value.dtype), value.device.type,
                None if values.is_complex() else values.to(torch.float64).flatten().tolist()]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return [type(value).__name__, value]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_summary(torch, v) for v in value]]
    if isinstance(value, torch.Size):
        return ["size", list(value)]
    return ["object", type(value).__name__]


def _module_source(samples):
    lines = ["import io", "import torch", ""]
    for index, (api, bodies) in enumerate(sorted(samples.items())):
        for variant, body in bodies.items():
            lines.append(f"def f_{index}_{variant}(x):  # {api}")
            lines += ["    " + line for line in body.splitlines()]
            lines.append("")
    return "\n".join(lines)


def _built(torch, fn, m, x, fullgraph):
    """``fn`` as machinery ``m`` makes it (tracing and exporting run it once)."""
    if m == "eager":
        return fn
    if m == "script":
        return torch.jit.script(fn)
    if m == "trace":
        return torch.jit.trace(fn, (x,), check_trace=False)
    if m == "fx":
        return torch.fx.symbolic_trace(fn)
    if m == "compile":
        torch._dynamo.reset()
        return torch.compile(fn, backend="aot_eager", fullgraph=fullgraph)
    if m == "export":
        class Wrapper(torch.nn.Module):
            def forward(self, t):
                return fn(t)

        return torch.export.export(Wrapper(), (x,), strict=False).module()
    raise ValueError(m)


def _outcome(torch, fn, m, x, fullgraph):
    """The outcome of ``fn(x)`` under ``m``, seeded just before the call (so random results
    compare; a machinery that fixed values when it was built shows it)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)
            built = _built(torch, fn, m, x, fullgraph)
            torch.manual_seed(0)
            return ["ok", _summary(torch, built(x))]
    except Exception as e:
        return ["error", type(e).__name__, (str(e).strip().splitlines() or [""])[0][:200]]


def _work(samples):
    """(api, variant) of every call, in the order both runs make them."""
    return [(api, variant) for api, bodies in sorted(samples.items()) for variant in bodies]


def run(folder, only=None, first=0, out=sys.stdout):
    """In the child: from call ``first`` on, every sample under every machinery in this process's
    mode, with its scratch files in ``folder`` (the parent's: a child TorchScript kills cannot
    remove its own). Writes one JSON line per outcome, {"start": [i, m]} before it (so that the
    parent can tell which call killed the process: TorchScript crashes on some classes)."""
    import torch

    from devshim import patches

    samples, missing = samples_for(torch, patches.plan(torch))
    if only:
        samples = {k: v for k, v in samples.items() if k in only}
    out.write(json.dumps({"missing": missing, "work": _work(samples)}) + "\n")
    out.flush()
    path = os.path.join(folder, "conformance_samples.py")
    with open(path, "w") as f:
        f.write(_module_source(samples))
    spec = importlib.util.spec_from_file_location("conformance_samples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.FILE = os.path.join(folder, "floats.bin")
    with open(module.FILE, "wb") as f:
        f.write(bytes(16))
    buf = io.BytesIO()
    torch.save(torch.arange(2.0), buf)
    module.CHECKPOINT = buf.getvalue()

    class Plus(torch.nn.Module):
        def forward(self, t):
            return t + 1

    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.save(torch.jit.script(Plus()), buf)
    module.ARCHIVE = buf.getvalue()
    index = {api: i for i, api in enumerate(sorted(samples))}
    for i, (api, variant) in enumerate(_work(samples)):
        if i < first:
            continue
        fn = getattr(module, f"f_{index[api]}_{variant}")
        fullgraph = "cpu" in samples[api]  # a call with a cpu form never breaks the graph
        for m in MACHINERY:
            out.write(json.dumps({"start": [i, m]}) + "\n")
            out.flush()
            outcome = _outcome(torch, fn, m, torch.tensor([1.0, 2.0]), fullgraph)
            out.write(json.dumps({"call": [i, api, variant, m], "outcome": outcome}) + "\n")
            out.flush()


def _same(a, b):
    """Two outcomes agree: both ok with equal summaries, or both refused (an exception, whatever
    its type: a machinery that cannot take a call says so in its own words, which may differ when
    the call went through devshim's Python first)."""
    if a is None or b is None or a[0] != b[0]:
        return False
    return a[0] == "error" or a[1] == b[1]


def _check(api, variant, m, outcomes, variants, before):
    """None when the outcome of ``api``'s ``variant`` under ``m`` is what the module's rules
    ask, else (what it was, what was expected, why)."""
    got, eager = outcomes[m], outcomes["eager"]
    if m == "script" and "cpu" not in variants:
        want = before.get(variant, {}).get(m)
        if want is not None and got[0] != "ok" and want[0] != "ok":
            return None  # TorchScript refuses it with and without the shim
        return None if _same(got, want) else (got, want, "TorchScript as without devshim")
    if "cpu" in variants:
        want = before.get("cpu", {}).get(m)
        why = "the cpu form without devshim" if variant == "cuda" else "the same without devshim"
        return None if _same(got, want) else (got, want, why)
    if m == "eager" or (m in TENSOR_ONLY and eager[1][0] != "tensor"):
        return None  # eager is the reference; trace and export take tensors out only
    if got[0] != "ok" and _same(got, before.get(variant, {}).get(m)):
        return None  # the machinery refuses this call without the shim too
    return None if _same(got, eager) else (got, eager, "the eager result with the shim")


def compare(plain, shimmed):
    """(problems, known): lines naming the API, variant and machinery of each outcome that is not
    what the rules ask; known limitations (KNOWN) are listed apart, and one that no longer
    happens is a problem (the list must not outlive what it describes)."""
    problems = [f"{api}: no sample (add one to devshim/conformance.py SAMPLES or LEFT_OUT)"
                for api in shimmed["missing"]]
    known, seen = [], set()
    for api, variants in sorted(shimmed["results"].items()):
        before = plain["results"].get(api, {})
        for variant, outcomes in variants.items():
            if outcomes["eager"][0] != "ok":
                problems.append(f"{api} [{variant}]: broken sample: eager with the shim: "
                                f"{_text(outcomes['eager'])}")
                continue
            for m in MACHINERY:
                found = _check(api, variant, m, outcomes, variants, before)
                if found is None:
                    continue
                got, want, why = found
                line = f"{api} [{variant}] under {m}: {_text(got)}; expected {_text(want)} ({why})"
                reason = KNOWN.get((api, m))
                if reason is not None:
                    seen.add((api, m))
                    known.append(f"{api} [{variant}] under {m}: {reason}")
                else:
                    problems.append(line)
    for api, m in sorted(set(KNOWN) - seen):
        if api in shimmed["results"]:
            problems.append(f"{api} under {m}: listed in KNOWN but conforms now: remove it")
    return problems, known


def _text(outcome):
    if outcome is None:
        return "nothing"
    if outcome[0] == "ok":
        return "ok " + json.dumps(outcome[1])[:160]
    return f"{outcome[1]}: {outcome[2]}".rstrip(": ")


def _child(shimmed, only, shim_dir):
    """The outcomes of one mode: {"results": {api: {variant: {machinery: outcome}}}, "missing"}.
    A call that kills its process is recorded as ["crashed", signal] and the rest go on in a new
    one. The children's scratch folder is removed when this returns."""
    with tempfile.TemporaryDirectory(prefix="devshim-conformance-") as folder:
        return _children(shimmed, only, shim_dir, folder)


def _children(shimmed, only, shim_dir, folder):
    env = {k: v for k, v in os.environ.items()
           if k != "ACTIVATE_TORCH_DEVICE" and not k.startswith("TORCHDEVICE_")}
    env["PYTHONPATH"] = os.pathsep.join([shim_dir] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p and os.path.abspath(p) != os.path.abspath(shim_dir)])
    env["PYTHONWARNINGS"] = "ignore"
    if shimmed:
        env["ACTIVATE_TORCH_DEVICE"] = "1"
    results, missing, work, first = {}, [], None, 0
    while work is None or first < len(work):
        args = [sys.executable, "-m", "devshim", "conformance", "--child", folder,
                "--first", str(first)]
        for api in only or ():
            args += ["--api", api]
        child = subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
        started, last = None, first - 1
        for line in child.stdout:
            doc = json.loads(line)
            if "work" in doc:
                work, missing = doc["work"], doc["missing"]
            elif "start" in doc:
                started = doc["start"]
            else:
                i, api, variant, m = doc["call"]
                results.setdefault(api, {}).setdefault(variant, {})[m] = doc["outcome"]
                started, last = None, i
        child.wait()
        if work is None:
            raise RuntimeError(f"the {'shimmed' if shimmed else 'plain'} run did not start "
                               f"(exit {child.returncode})")
        if started is None:
            if child.returncode != 0 and last + 1 < len(work):
                raise RuntimeError(f"the {'shimmed' if shimmed else 'plain'} run ended "
                                   f"(exit {child.returncode}) between two calls")
            break
        i, m = started
        crashed = ["crashed", f"signal {-child.returncode}" if child.returncode < 0
                   else f"exit {child.returncode}", "the process died"]
        api, variant = work[i]
        outcomes = results.setdefault(api, {}).setdefault(variant, {})
        outcomes[m] = crashed
        for later in MACHINERY[MACHINERY.index(m) + 1:]:
            outcomes[later] = ["not run", "an earlier machinery crashed", ""]
        first = i + 1
    return {"results": results, "missing": missing}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devshim conformance",
        description="Run every API the shim patches under torch's machinery, with and without "
                    "the shim, and compare (devshim/conformance.py).")
    parser.add_argument("--api", action="append", default=[], help="only this API (repeatable)")
    parser.add_argument("--json", action="store_true", help="both runs' outcomes and the problems")
    parser.add_argument("--child", metavar="FOLDER", help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run(args.child, set(args.api), args.first)
        return 0
    from devshim.sweep import default_shim_dir  # the same folder as the sweep's

    shim_dir = default_shim_dir()
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        plain = pool.submit(_child, False, args.api, shim_dir)
        shimmed = pool.submit(_child, True, args.api, shim_dir)
        plain, shimmed = plain.result(), shimmed.result()
    problems, known = compare(plain, shimmed)
    if args.json:
        print(json.dumps({"plain": plain, "shimmed": shimmed, "problems": problems,
                          "known": known}, indent=1))
    else:
        checked = sum(len(v) for v in shimmed["results"].values())
        print(f"{len(shimmed['results'])} APIs, {checked} calls, each under "
              f"{len(MACHINERY)} machineries: {len(problems)} problems, "
              f"{len(known)} known limitations")
        for line in problems:
            print("  problem: " + line)
        for line in known:
            print("  known: " + line)
    return 1 if problems else 0
