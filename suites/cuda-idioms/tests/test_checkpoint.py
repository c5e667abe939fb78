"""Checkpoints as CUDA code saves and loads them: ``torch.save`` of a model that lives on "cuda",
``torch.load`` with a cuda ``map_location`` (string, ``torch.device``, dict, callable), and
checkpoints written on another machine's GPUs (``cuda:0``, ``cuda:1``).

Everything is written under pytest's ``tmp_path``. Loaded values must equal what was saved, and a
resumed training run must end where an uninterrupted one does.
"""
import copy
import io
import zipfile

import pytest
import torch
from torch import nn


def cuda_device():
    return torch.zeros(1, device="cuda").device


def make_model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))


def save_as_if_on(obj, path, location):
    """Write ``obj`` (CPU tensors) as a checkpoint whose storages were on ``location``.

    Stands in for a file written on another machine, e.g. with two GPUs: torch.save records each
    storage's device in the pickle, and here the recorded "cpu" is swapped for ``location``.
    """
    buf = io.BytesIO()
    torch.save(obj, buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    pickled_location = b"X" + len(location.encode()).to_bytes(4, "little") + location.encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith("/data.pkl"):
                data = data.replace(b"X\x03\x00\x00\x00cpu", pickled_location)
            dst.writestr(info.filename, data)


def assert_state_equal(got, expected):
    assert list(got) == list(expected)
    for k in expected:
        assert torch.equal(got[k].cpu(), expected[k].cpu()), k


def test_save_cuda_model_load_with_map_location_cuda0(tmp_path):
    model = make_model().cuda()
    path = tmp_path / "model.pt"
    torch.save(model.state_dict(), path)
    sd = torch.load(path, map_location="cuda:0")
    assert_state_equal(sd, model.state_dict())
    assert all(t.device == cuda_device() for t in sd.values())


def test_map_location_torch_device(tmp_path):
    model = make_model().cuda()
    path = tmp_path / "model.pt"
    torch.save(model.state_dict(), path)
    sd = torch.load(path, map_location=torch.device("cuda"))
    assert_state_equal(sd, model.state_dict())
    assert all(t.device == cuda_device() for t in sd.values())


def test_cpu_checkpoint_loaded_onto_cuda_and_into_model(tmp_path):
    cpu_model = make_model(seed=1)
    path = tmp_path / "cpu.pt"
    torch.save(cpu_model.state_dict(), path)
    model = make_model(seed=2).cuda()
    model.load_state_dict(torch.load(path, map_location="cuda"))
    x = torch.randn(4, 6)
    with torch.no_grad():
        assert torch.allclose(model(x.cuda()).cpu(), cpu_model(x), atol=1e-6)


def test_checkpoint_from_gpu_machine_with_map_location_cuda(tmp_path):
    state = make_model(seed=3).state_dict()
    path = tmp_path / "gpu0.pt"
    save_as_if_on(state, path, "cuda:0")
    sd = torch.load(path, map_location="cuda")
    assert_state_equal(sd, state)
    assert all(t.device == cuda_device() for t in sd.values())


def test_checkpoint_from_gpu_machine_without_map_location(tmp_path):
    state = make_model(seed=4).state_dict()
    path = tmp_path / "gpu0.pt"
    save_as_if_on(state, path, "cuda:0")
    sd = torch.load(path)  # restores onto cuda:0, where it was saved
    assert_state_equal(sd, state)
    assert all(t.device == cuda_device() for t in sd.values())


def test_checkpoint_from_second_gpu_with_dict_map_location(tmp_path):
    state = make_model(seed=5).state_dict()
    path = tmp_path / "gpu1.pt"
    if torch.cuda.device_count() >= 2:
        torch.save({k: v.to("cuda:1") for k, v in state.items()}, path)
    else:
        save_as_if_on(state, path, "cuda:1")
    sd = torch.load(path, map_location={"cuda:1": "cuda:0"})
    assert_state_equal(sd, state)
    assert all(t.device == cuda_device() for t in sd.values())


def test_callable_map_location(tmp_path):
    state = make_model(seed=6).state_dict()
    path = tmp_path / "gpu1.pt"
    save_as_if_on(state, path, "cuda:1")
    sd = torch.load(path, map_location=lambda storage, loc: storage.cuda(0))
    assert_state_equal(sd, state)
    assert all(t.device == cuda_device() for t in sd.values())


def test_map_location_cpu_of_cuda_checkpoint(tmp_path):
    model = make_model(seed=7).cuda()
    path = tmp_path / "m.pt"
    torch.save(model.state_dict(), path)
    sd = torch.load(path, map_location="cpu")
    reference = make_model(seed=7).state_dict()
    assert_state_equal(sd, reference)


def test_resume_training_from_checkpoint_matches_uninterrupted(tmp_path):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 6, generator=g).cuda()
    y = torch.randn(32, 3, generator=g).cuda()

    def steps(model, opt, n):
        for _ in range(n):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()

    straight = make_model().cuda()
    straight_opt = torch.optim.Adam(straight.parameters(), lr=1e-2)
    steps(straight, straight_opt, 10)

    first = make_model().cuda()
    first_opt = torch.optim.Adam(first.parameters(), lr=1e-2)
    steps(first, first_opt, 5)
    path = tmp_path / "ckpt.pt"
    torch.save({"model": first.state_dict(), "optim": first_opt.state_dict(), "epoch": 5}, path)

    ckpt = torch.load(path, map_location="cuda:0")
    assert ckpt["epoch"] == 5
    resumed = make_model(seed=99).cuda()
    resumed.load_state_dict(ckpt["model"])
    resumed_opt = torch.optim.Adam(resumed.parameters(), lr=1e-2)
    resumed_opt.load_state_dict(ckpt["optim"])
    steps(resumed, resumed_opt, 5)
    for a, b in zip(resumed.parameters(), straight.parameters()):
        assert torch.allclose(a.detach().cpu(), b.detach().cpu(), atol=1e-6)


def test_whole_module_save_and_load(tmp_path):
    model = make_model(seed=8).cuda()
    path = tmp_path / "whole.pt"
    torch.save(model, path)
    loaded = torch.load(path, map_location="cuda", weights_only=False)
    x = torch.randn(3, 6).cuda()
    with torch.no_grad():
        assert torch.equal(loaded(x).cpu(), model(x).cpu())
    assert isinstance(loaded, nn.Sequential) and len(loaded) == 3
    clone = copy.deepcopy(loaded)
    assert next(clone.parameters()).device == cuda_device()


@pytest.mark.parametrize("location", ["cuda", "cuda:0"])
def test_tensor_round_trip_through_buffer(location):
    t = torch.linspace(-1, 1, 9, device=location)
    buf = io.BytesIO()
    torch.save(t, buf)
    buf.seek(0)
    back = torch.load(buf, map_location=location)
    assert torch.equal(back.cpu(), torch.linspace(-1, 1, 9))
    assert back.device == cuda_device()
