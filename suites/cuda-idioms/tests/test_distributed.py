"""Single-process distributed code written for NVIDIA GPUs: ``init_process_group("nccl")`` with
world_size=1, collectives on cuda tensors, DistributedDataParallel.

Every test initialises its own process group, and an autouse fixture destroys it when the test
ends, passed or failed, so tests do not depend on one another. Rendezvous is on 127.0.0.1 at a
free port, through a file under ``tmp_path``, or through MASTER_ADDR/MASTER_PORT: no network.
"""
import copy
import datetime
import os
import socket

import pytest
import torch
import torch.distributed as dist
from torch import nn

TIMEOUT = datetime.timedelta(seconds=60)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(autouse=True)
def cleanup():
    """Destroys whatever process group a test left behind, passed or failed."""
    yield
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def init_nccl():
    torch.cuda.set_device(0)
    dist.init_process_group(backend="nccl", init_method=f"tcp://127.0.0.1:{free_port()}",
                            world_size=1, rank=0, timeout=TIMEOUT)


def test_init_with_tcp_and_all_reduce():
    init_nccl()
    assert dist.is_initialized()
    assert dist.get_rank() == 0 and dist.get_world_size() == 1
    t = torch.arange(4, dtype=torch.float32, device="cuda") * 3
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    assert t.cpu().tolist() == [0.0, 3.0, 6.0, 9.0]


def test_init_with_file_store(tmp_path):
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"file://{tmp_path / 'rendezvous'}",
                            world_size=1, rank=0, timeout=TIMEOUT)
    t = torch.ones(3, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    assert t.cpu().tolist() == [1.0, 1.0, 1.0]
    dist.destroy_process_group()
    assert not dist.is_initialized()


def test_init_from_environment(monkeypatch):
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(free_port()))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("LOCAL_RANK", "0")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", timeout=TIMEOUT)
    t = torch.tensor([2.5], device=f"cuda:{local_rank}")
    dist.all_reduce(t)
    dist.barrier()
    assert t.item() == 2.5
    assert dist.get_world_size() == 1


def test_broadcast_and_all_gather():
    init_nccl()
    src = torch.tensor([1.0, 2.0, 3.0], device="cuda")
    dist.broadcast(src, src=0)
    out = [torch.zeros(3, device="cuda") for _ in range(dist.get_world_size())]
    dist.all_gather(out, src)
    assert len(out) == 1
    assert out[0].cpu().tolist() == [1.0, 2.0, 3.0]


def test_all_reduce_mean_of_loss_for_logging():
    init_nccl()
    losses = torch.tensor([0.5, 1.5, 1.0], device="cuda")
    mean = losses.mean()
    dist.all_reduce(mean)
    mean /= dist.get_world_size()
    assert abs(mean.item() - 1.0) < 1e-6


def test_ddp_step_matches_plain_step():
    init_nccl()
    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    plain = copy.deepcopy(base).cuda()
    ddp = nn.parallel.DistributedDataParallel(copy.deepcopy(base).cuda(), device_ids=[0])
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 4, generator=g).cuda()
    y = torch.randn(16, 1, generator=g).cuda()
    for model in (plain, ddp):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    for a, b in zip(ddp.module.parameters(), plain.parameters()):
        assert torch.allclose(a.detach().cpu(), b.detach().cpu(), atol=1e-6)


def test_group_can_be_created_again_after_destroy():
    for value in (1.0, 2.0):
        torch.cuda.set_device(0)
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{free_port()}",
                                world_size=1, rank=0, timeout=TIMEOUT)
        t = torch.full((2,), value, device="cuda")
        dist.all_reduce(t)
        assert t.cpu().tolist() == [value, value]
        dist.destroy_process_group()
    assert not dist.is_initialized()
