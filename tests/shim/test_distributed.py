"""Multi-process code on this machine: NCCL process groups become gloo, device ids are dropped,
DataParallel wraps the module unchanged; pinned memory requests are harmless; a job's processes
on this host each have a device."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
from conftest import SHIM_DIR, cpu_only  # noqa: E402
from devshim import record, runtime  # noqa: E402
from devshim.distributed import translate_backend  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")


@pytest.mark.parametrize("given,expected", [
    ("nccl", "gloo"), ("NCCL", "gloo"), ("gloo", None), (None, None), ("mpi", None),
    ("cuda:nccl,cpu:gloo", "cpu:gloo"), ("cpu:gloo,cuda:nccl", "cpu:gloo"), ("cuda:nccl", "gloo"),
    ("cpu:nccl", "cpu:gloo"),
])
def test_translate_backend(given, expected):
    assert translate_backend(given) == expected


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not built")
@pytest.mark.parametrize("backend", ["nccl", "cuda:nccl,cpu:gloo"])
def test_single_process_nccl_group_with_ddp(shim_keeping_objects, tmp_path, backend):
    # keep: device_id=torch.device("cuda", 0) is a CUDA device object, which the shim drops
    # (redirect, the default, builds it as the CPU: test_device_id_built_as_the_device_used_...).
    dist = torch.distributed
    dist.init_process_group(backend=backend, init_method=f"file://{tmp_path / 'store'}",
                            rank=0, world_size=1, device_id=torch.device("cuda", 0))
    try:
        assert dist.get_backend() in ("gloo", "cpu:gloo")
        torch.cuda.set_device(0)
        t = torch.ones(3, device="cuda")
        dist.all_reduce(t)
        assert t.tolist() == [1.0, 1.0, 1.0]
        dist.barrier(device_ids=[0])
        group = dist.new_group(ranks=[0], backend="nccl")
        dist.all_reduce(t, group=group)
        model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 1).cuda(),
                                                          device_ids=[0], output_device=0)
        model(torch.randn(4, 3, device="cuda")).sum().backward()
        assert model.module.weight.grad is not None
    finally:
        dist.destroy_process_group()
    apis = {r["api"] for r in record.rows()}
    assert {"torch.distributed.init_process_group", "torch.distributed.barrier",
            "torch.distributed.new_group", "torch.nn.parallel.DistributedDataParallel"} <= apis


def test_data_parallel_wraps_the_module(shim):
    inner = torch.nn.Linear(3, 2)
    model = torch.nn.DataParallel(inner).cuda()
    x = torch.randn(5, 3, device="cuda")
    assert torch.equal(model(x), inner(x))
    assert model.module is inner
    # As on a machine with one GPU: its one device (torch_geometric's DataParallel reads
    # device_ids[0] in its __init__; with torch's no-GPU [] it raised IndexError).
    assert model.device_ids == [0] and model.output_device == 0
    assert model.src_device_obj == torch.device("cuda", 0)


def test_a_data_parallel_subclass_reads_its_one_device(shim):
    class Batched(torch.nn.DataParallel):
        def __init__(self, module):
            super().__init__(module)
            self.src_device = torch.device(f"cuda:{self.device_ids[0]}")

        def forward(self, x):
            return self.module(x.to(self.src_device))

    inner = torch.nn.Linear(3, 2).cuda()
    x = torch.randn(4, 3)
    assert torch.equal(Batched(inner)(x), inner(x))


def test_scatter_and_gather_to_the_one_device(shim):
    # captum's layer attributions scatter their inputs to the model's device_ids (then [0]) and
    # gather the gradients; torch's own need CUDA (torch._C._scatter, a copy stream per device).
    x = torch.arange(12.0).reshape(6, 2).requires_grad_()
    (whole,) = torch.nn.parallel.scatter(x, [0])
    assert torch.equal(whole, x) and whole.device == torch.device(runtime.used)
    nested = torch.nn.parallel.scatter((x, {"k": x}), [0, 0])
    assert len(nested) == 2 and nested[1][1]["k"].shape == (3, 2)
    halves = [part for part, _ in nested]
    assert [h.data_ptr() != x.data_ptr() for h in halves] == [True, True], "copies, as torch's"
    joined = torch.nn.parallel.gather(halves, 0)
    assert torch.equal(joined, x)
    (joined * 2).sum().backward()  # scatter's gradient is a gather, and the other way round
    assert torch.equal(x.grad, torch.full_like(x, 2.0))
    chunks = torch.nn.parallel.comm.scatter(torch.arange(5.0), [0, 0], chunk_sizes=[2, 3])
    assert [c.tolist() for c in chunks] == [[0.0, 1.0], [2.0, 3.0, 4.0]]
    assert torch.nn.parallel.comm.gather(chunks, 0, -1).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_replicate_parallel_apply_and_data_parallel_on_the_one_device(shim):
    # DataParallel subclasses (and code written for several GPUs) replicate the module to its
    # device_ids, run the replicas with parallel_apply and reduce the gradients back; torch's
    # broadcast and reduction are CUDA's own (torch._C._broadcast_coalesced, "Broadcast function
    # not implemented for CPU tensors"), parallel_apply enters each replica's stream.
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).cuda()
    x = torch.randn(4, 3, device="cuda")
    replicas = torch.nn.parallel.replicate(model, [0])
    (out,) = torch.nn.parallel.parallel_apply(replicas, [(x,)], None, [0])
    assert torch.allclose(out, model(x))
    out.sum().backward()  # broadcast's gradient is a reduction onto the module's parameters
    assert model[0].weight.grad is not None and model[0].weight.grad.abs().sum() > 0
    assert torch.allclose(torch.nn.parallel.data_parallel(model, x, [0]), model(x))
    assert torch.allclose(torch.nn.parallel.data_parallel(model, x), model(x))
    import torch.cuda.comm as comm  # torch.nn.parallel.comm's functions, imported after patching
    (same,) = comm.broadcast(x, [0])
    assert same is x, "as on one GPU: the source device's copy is the tensor itself"
    first, second = comm.broadcast_coalesced([x, x + 1], [0, 0])
    assert first[0] is x and torch.equal(second[1], x + 1) and second[0] is not x
    assert torch.equal(comm.reduce_add([x, x]), x * 2)
    summed = comm.reduce_add_coalesced([[x, x + 1], [x, x]], 0)
    assert torch.equal(summed[0], x * 2) and torch.allclose(summed[1], x * 2 + 1)
    with pytest.raises(ValueError, match="input 1 has invalid size"):
        comm.reduce_add([x, x[:2]])
    apis = {r["api"] for r in record.rows()}
    assert {"torch.nn.parallel.replicate", "torch.nn.parallel.data_parallel"} <= apis


def test_pin_memory(shim):
    x = torch.ones(3)
    assert not x.is_pinned()
    y = x.pin_memory()
    assert y is x and y.is_pinned()
    assert not x.clone().is_pinned()
    z = torch.empty(4, pin_memory=True)
    assert z.is_pinned() and z.device.type == "cpu"
    # A DataLoader asked to pin keeps saying so, and its batches are pinned (marked) as on CUDA,
    # in the main process and through torch's pinning thread (workers).
    for workers in (0, 2):
        loader = torch.utils.data.DataLoader(torch.arange(6.0), batch_size=2, pin_memory=True,
                                             num_workers=workers)
        assert loader.pin_memory is True
        batches = list(loader)
        assert [b.tolist() for b in batches] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
        assert all(b.is_pinned() for b in batches), workers
    loader = torch.utils.data.DataLoader(torch.arange(6.0), 3, False, None, None, 0, None, True)
    assert loader.pin_memory is True and next(iter(loader)).is_pinned()
    rows = {(r["api"], r["requested"]) for r in record.rows()}
    assert {("torch.Tensor.pin_memory", "pinned"), ("torch.empty", "pinned"),
            ("torch.utils.data.DataLoader", "pinned")} <= rows


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not built")
def test_device_id_built_as_the_device_used_is_dropped_too(clean_env, tmp_path):
    # TORCHDEVICE_DEVICE_OBJECTS=redirect: torch.device("cuda", 0) already is the CPU, which
    # torch refuses as a device_id ("must be an accelerator with an index").
    import devshim

    clean_env.setenv("TORCHDEVICE_DEVICE_OBJECTS", "redirect")
    devshim.deactivate()
    devshim.activate()
    dist = torch.distributed
    try:
        device = torch.device("cuda", 0)
        assert device.type == "cpu"
        dist.init_process_group(backend="nccl", init_method=f"file://{tmp_path / 'store'}",
                                rank=0, world_size=1, device_id=device)
        try:
            t = torch.ones(2, device=device)
            dist.all_reduce(t)
            assert t.tolist() == [1.0, 1.0]
        finally:
            dist.destroy_process_group()
    finally:
        devshim.deactivate()


@pytest.mark.parametrize(
    ("env", "count"),
    [
        ({}, 1),
        ({"WORLD_SIZE": "4"}, 1),  # no local rank: not a process of a job on this host
        ({"LOCAL_RANK": "1", "WORLD_SIZE": "2"}, 2),
        ({"LOCAL_RANK": "0", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4"}, 4),
        ({"LOCAL_WORLD_SIZE": "3"}, 3),
        ({"LOCAL_RANK": "1", "WORLD_SIZE": "two"}, 1),
        ({"LOCAL_RANK": "0", "WORLD_SIZE": "0"}, 1),
    ],
)
def test_a_distributed_job_on_this_host_has_a_device_per_process(shim, monkeypatch, env, count):
    for name in ("LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert torch.cuda.device_count() == count
    assert torch.accelerator.device_count() == count
    # Under redirect (the default) an index that exists is built as the device used, one past
    # the job's size stays as written.
    assert torch.device(f"cuda:{count - 1}") == torch.device("cpu")
    assert torch.device(f"cuda:{count}").type == "cuda"


def test_the_size_a_launcher_sets_later_is_seen(shim, monkeypatch):
    for name in ("LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    assert torch.device("cuda:1").type == "cuda"  # no such device yet
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert torch.device("cuda:1") == torch.device("cpu")  # not a stale answer


def test_set_device_selects_the_ranks_own_device(shim_keeping_objects, monkeypatch):
    # mmengine's FSDP test and Lightning pick their device with torch.cuda.set_device(local_rank)
    # and later build torch.device("cuda", torch.cuda.current_device()).
    for name in ("LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    try:
        assert torch.cuda.current_device() == 0
        torch.cuda.set_device("cuda:1")
        assert torch.cuda.current_device() == 1
        assert torch.accelerator.current_device_index() == 1
        assert torch.device("cuda", torch.cuda.current_device()) == torch.device("cuda:1")
        torch.cuda.set_device(torch.device("cuda", 0))  # a device object, as keep builds it
        assert torch.cuda.current_device() == 0
        torch.accelerator.set_device_index(1)
        assert torch.cuda.current_device() == 1
        torch.cuda.set_device(5)  # a device the job lacks: device 0, as for tensors
        assert torch.cuda.current_device() == 0
        torch.cuda.set_device(1)
        monkeypatch.delenv("LOCAL_RANK")  # out of the job: one device, device 0
        assert torch.cuda.current_device() == 0
    finally:
        torch.cuda.set_device(0)


# Two processes on this host, each taking "its" GPU by local rank as torchtnt's
# get_device_from_env does, with the shim activated by its sitecustomize as the runner does.
TWO_RANKS = r"""
import os, sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def rank_main(rank, store):
    os.environ.update(LOCAL_RANK=str(rank), WORLD_SIZE="2")
    if rank >= torch.cuda.device_count():
        raise RuntimeError("The local rank is larger than the number of available GPUs.")
    device = torch.device(f"cuda:{rank}")
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        t = torch.full((2,), float(rank + 1), device=device)
        assert t.device == device, (t.device, device)
        dist.all_reduce(t)
        assert t.tolist() == [3.0, 3.0], t
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(rank_main, args=(sys.argv[1],), nprocs=2)
    print("two ranks ok")
"""


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not built")
def test_two_processes_each_take_a_gpu_by_local_rank(clean_env, tmp_path):
    script = tmp_path / "two_ranks.py"
    script.write_text(TWO_RANKS)
    env = {k: v for k, v in os.environ.items()
           if k not in ("LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")}
    env.update(ACTIVATE_TORCH_DEVICE="1", PYTHONPATH=str(SHIM_DIR), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "store")], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "two ranks ok" in done.stdout
