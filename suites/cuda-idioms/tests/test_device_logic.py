"""Device-selection logic of CUDA-first code: "cuda if available else cpu", device-count loops,
device names and capabilities, ``set_device``/``current_device``, ``torch.cuda.device(...)``,
``torch.set_default_device("cuda")`` and ``with torch.device("cuda"):``.

The first two tests fall back to the CPU by themselves, so they pass with or without the shim.
"""
import copy

import pytest
import torch
from torch import nn


def cuda_device():
    return torch.zeros(1, device="cuda").device


def reference_mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 7), nn.GELU(), nn.Linear(7, 2))


def test_cuda_if_available_else_cpu():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    a = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    got = (a.to(device) @ a.to(device).T).cpu()
    assert torch.equal(got, a @ a.T)


def test_torch_device_fallback_with_a_model():
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = reference_mlp()
    x = torch.randn(6, 5)
    expected = model(x).detach()
    model.to(device)
    with torch.no_grad():
        got = model(x.to(device)).cpu()
    assert torch.allclose(got, expected, atol=1e-6)


def test_device_count_loop_over_gpus():
    names = []
    totals = []
    for i in range(torch.cuda.device_count()):
        names.append(torch.cuda.get_device_name(i))
        totals.append(torch.ones(2, device=f"cuda:{i}").sum().item())
    assert len(names) == torch.cuda.device_count() >= 1
    assert all(isinstance(n, str) and n for n in names)
    assert names[0] == torch.cuda.get_device_name() == torch.cuda.get_device_properties(0).name
    assert totals == [2.0] * len(names)


def test_device_properties_fields():
    props = torch.cuda.get_device_properties(0)
    same = torch.cuda.get_device_properties(torch.device("cuda:0"))
    assert props.name == same.name and props.total_memory == same.total_memory
    assert isinstance(props.total_memory, int) and props.total_memory > 0
    assert props.multi_processor_count > 0
    assert (props.major, props.minor) == torch.cuda.get_device_capability(0)


def test_capability_gate_picks_a_path_that_computes_right():
    major, minor = torch.cuda.get_device_capability()
    assert isinstance(major, int) and isinstance(minor, int)
    use_amp = major >= 7  # tensor cores from Volta on
    model = reference_mlp()
    x = torch.randn(16, 5)
    expected = model(x).detach()
    model.cuda()
    with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
        out = model(x.cuda())
    assert out.dtype == (torch.float16 if use_amp else torch.float32)
    assert torch.allclose(out.float().cpu(), expected, atol=2e-2, rtol=2e-2)


def test_set_device_and_current_device():
    torch.cuda.set_device(0)
    assert torch.cuda.current_device() == 0
    x = torch.full((3,), 4.0, device=f"cuda:{torch.cuda.current_device()}")
    assert x.device == cuda_device()
    assert x.sum().item() == 12.0


def test_cuda_device_context_manager():
    with torch.cuda.device(0):
        assert torch.cuda.current_device() == 0
        x = torch.ones(3, device="cuda")
    with torch.cuda.device("cuda:0"):
        y = torch.ones(3, device="cuda") * 2
    assert x.device == y.device == cuda_device()
    assert (x + y).cpu().tolist() == [3.0, 3.0, 3.0]


def test_set_default_device_cuda():
    torch.set_default_device("cuda")
    try:
        x = torch.zeros(3)
        r = torch.arange(4)
        lin = nn.Linear(2, 2)
        assert x.device == r.device == lin.weight.device == cuda_device()
        assert r.sum().item() == 6
        out = lin(torch.ones(1, 2))
        expected = (lin.weight.sum(dim=1) + lin.bias).detach().cpu().unsqueeze(0)
        assert torch.allclose(out.cpu(), expected)
    finally:
        torch.set_default_device(None)
    # Back to the normal default: no device given means what an explicit "cpu" means.
    assert torch.zeros(1).device == torch.zeros(1, device="cpu").device


def test_torch_device_context_manager_builds_model_on_cuda():
    with torch.device("cuda"):
        torch.manual_seed(0)
        model = nn.Linear(3, 2)
        x = torch.randn(5, 3)
    assert model.weight.device == x.device == cuda_device()
    w, b = model.weight.detach().cpu(), model.bias.detach().cpu()
    expected = x.cpu() @ w.T + b
    assert torch.allclose(model(x).detach().cpu(), expected, atol=1e-6)


def test_is_bf16_supported_gates_bfloat16():
    supported = torch.cuda.is_bf16_supported()
    assert isinstance(supported, bool)
    if not supported:
        pytest.skip("no bfloat16 on this device")
    a = torch.randn(16, 16)
    got = (a.cuda().bfloat16() @ a.cuda().bfloat16()).float().cpu()
    assert torch.allclose(got, a @ a, atol=0.5, rtol=5e-2)


def test_data_parallel_only_with_several_gpus():
    model = reference_mlp()
    reference = copy.deepcopy(model)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    model.cuda()
    x = torch.randn(8, 5)
    with torch.no_grad():
        got = model(x.cuda()).cpu()
        expected = reference(x)
    assert torch.allclose(got, expected, atol=1e-5)


def test_tf32_switches_keep_results_close():
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    try:
        a = torch.randn(64, 64)
        got = (a.cuda() @ a.cuda()).cpu()
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
    assert torch.allclose(got, a @ a, atol=0.1, rtol=1e-2)
