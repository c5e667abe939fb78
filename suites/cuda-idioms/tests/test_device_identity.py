"""Device identity as real CUDA-written suites check it (issue 31's style probes): what each idiom
gives under the shim's three settings of TORCHDEVICE_DEVICE_OBJECTS
(docs/shim.md#device-identity).

Under the shim a tensor "on cuda" is on the device used, and its ``.device`` says so. Code then
compares it with a device object it built: under ``keep`` it is built as written, so the
comparison fails as it does on a CPU without the shim; under ``redirect`` (the default) a "cuda"
device object without an index or with one that exists is built as the device used, so the
comparison holds; ``redirect-indexed`` does so only for an index that exists. Each setting gives
up some idiom: a test that a setting cannot pass is marked xfail for that setting (strict: it must
fail there), so this file passes under all three and says which idioms each costs. Without the
shim, on a machine without CUDA, these tests fail as CUDA code does there.
"""
import os
import sys

import pytest
import torch
from torch import nn


def device_objects():
    """The shim's TORCHDEVICE_DEVICE_OBJECTS setting in this process, or None without the shim."""
    devshim = sys.modules.get("devshim")
    if devshim is None or not devshim.status().get("torch_patched"):
        return None
    return devshim.status()["device_objects"]


def costs_under(settings, reason):
    return pytest.mark.xfail(device_objects() in settings.split(), reason=reason, strict=True)


KEEP_COST = ("under keep, torch.device('cuda', 0) is a cuda device and the tensor the shim placed "
             "is not on it")
REDIRECT_COST = ("under redirect, torch.device('cuda', 0) is the device used: a CPU device has no "
                 "index")
INDEXLESS_KEPT_COST = ("torch.device('cuda') with no index is built as written: a cuda device, "
                       "not the type of the device the tensors were placed on")
INDEXLESS_REDIRECTED_COST = ("under redirect, torch.device('cuda') is the device used: code that "
                             "branches on its type takes the path of that device")


@costs_under("keep", KEEP_COST)
def test_a_module_moved_to_cuda_is_on_cuda_device_zero():
    # accelerate's and Lightning's tests: move, then assert where the parameters are.
    model = nn.Linear(3, 4).to("cuda")
    assert all(p.device == torch.device("cuda", 0) for p in model.parameters())
    assert model.weight.device == torch.device("cuda:0") == torch.device(0)


@costs_under("keep", KEEP_COST)
def test_library_code_builds_the_current_cuda_device_and_compares():
    # Lightning's CUDAAccelerator and strategies: the root device is built from current_device()
    # and compared with batches the model returns.
    root = torch.device(f"cuda:{torch.cuda.current_device()}")
    batch = torch.ones(2, 3).cuda()
    assert batch.device == root
    assert {t.device for t in (batch, torch.zeros(1, device=root))} == {root}


@costs_under("redirect redirect-indexed", REDIRECT_COST)
def test_local_rank_selects_the_device(monkeypatch):
    # LOCAL_RANK-style device selection that reads the index of the device it built.
    monkeypatch.setenv("LOCAL_RANK", "0")
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", local_rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    assert torch.cuda.current_device() == device.index == 0
    y = torch.arange(4, device=device) * 2
    assert y.cpu().tolist() == [0, 2, 4, 6]


@costs_under("keep redirect-indexed", INDEXLESS_KEPT_COST)
def test_a_model_placed_on_a_cuda_device_has_its_type():
    # stable-baselines3's and mmengine's tests: place with torch.device("cuda") (no index), then
    # compare the parameters' device type with the device object's.
    device = torch.device("cuda")
    model = nn.Linear(3, 4).to(device)
    assert all(p.device.type == device.type for p in model.parameters())


@costs_under("redirect", INDEXLESS_REDIRECTED_COST)
def test_library_code_branches_on_the_type_of_a_cuda_device_without_an_index():
    # accelerate's own device is torch.device("cuda"): it sets up fp16 autocast and a GradScaler
    # because its type is "cuda". Using the device lands on the device used under every setting.
    device = torch.device("cuda")
    assert device.type == "cuda" and device.index is None
    use_scaler = device.type == "cuda"
    scaler = torch.amp.GradScaler("cuda", enabled=use_scaler)
    loss = (nn.Linear(2, 1).to(device)(torch.ones(1, 2, device=device)) ** 2).sum()
    assert scaler.scale(loss).item() == pytest.approx(loss.item() * 2.0**16)
