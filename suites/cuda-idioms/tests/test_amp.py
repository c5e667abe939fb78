"""Mixed precision as CUDA code writes it: ``torch.autocast("cuda")``, ``torch.cuda.amp`` and
``GradScaler``. Results are checked against the same computation in float32, and the scaler's
bookkeeping (scale value, skipped steps on inf, growth) against what GradScaler documents.
"""
import copy
import warnings

import pytest
import torch
from torch import nn

HALF_TYPES = (torch.float16, torch.bfloat16)


def model_and_data(seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(32, 16, generator=g)
    y = torch.randn(32, 4, generator=g)
    return model, x, y


def test_autocast_cuda_fp16_matches_fp32():
    model, x, _ = model_and_data()
    expected = model(x).detach()
    model = model.cuda()
    xc = x.cuda()
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        out = model(xc)
    assert out.dtype == torch.float16
    assert torch.allclose(out.float().cpu(), expected, atol=2e-2, rtol=2e-2)


def test_autocast_cuda_default_dtype_is_reduced_precision():
    model, x, _ = model_and_data()
    expected = model(x).detach()
    model.cuda()
    with torch.autocast("cuda"):
        out = model(x.cuda())
    # float16 on NVIDIA GPUs; the shim may choose the half type its device runs best.
    assert out.dtype in HALF_TYPES
    assert torch.allclose(out.float().cpu(), expected, atol=5e-2, rtol=5e-2)


def test_torch_cuda_amp_autocast_legacy_spelling():
    a = torch.randn(8, 8).cuda()
    b = torch.randn(8, 8).cuda()
    expected = (a.cpu() @ b.cpu())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with torch.cuda.amp.autocast():
            c = torch.mm(a, b)
    assert c.dtype in HALF_TYPES
    assert torch.allclose(c.float().cpu(), expected, atol=5e-2, rtol=5e-2)


def test_autocast_can_be_disabled_inside():
    a = torch.randn(4, 4, device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        half = a @ a
        with torch.autocast("cuda", enabled=False):
            full = a @ a
    assert half.dtype == torch.float16
    assert full.dtype == torch.float32
    assert torch.allclose(full.cpu(), a.cpu() @ a.cpu(), atol=1e-5)


def test_bf16_autocast_when_supported():
    if not torch.cuda.is_bf16_supported():
        pytest.skip("device has no bfloat16")
    model, x, _ = model_and_data()
    expected = model(x).detach()
    model.cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = model(x.cuda())
    assert out.dtype == torch.bfloat16
    assert torch.allclose(out.float().cpu(), expected, atol=1e-1, rtol=5e-2)


def test_backward_under_autocast_gives_fp32_grads_close_to_fp32():
    model, x, y = model_and_data()
    ref = copy.deepcopy(model)
    nn.functional.mse_loss(ref(x), y).backward()
    model.cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
    loss.backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        assert p.grad.dtype == torch.float32
        assert torch.allclose(p.grad.cpu(), q.grad, atol=1e-2, rtol=5e-2)


def test_grad_scaler_scales_the_loss():
    scaler = torch.amp.GradScaler("cuda")
    assert scaler.is_enabled()
    assert scaler.get_scale() == 65536.0
    loss = torch.tensor(0.75, device="cuda")
    assert scaler.scale(loss).item() == 0.75 * 65536.0


def test_grad_scaler_unscale_recovers_true_gradients():
    model, x, y = model_and_data()
    ref = copy.deepcopy(model)
    nn.functional.mse_loss(ref(x), y).backward()
    model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    scaler.scale(nn.functional.mse_loss(model(x.cuda()), y.cuda())).backward()
    first = next(model.parameters())
    assert torch.allclose(first.grad.cpu() / 65536.0, next(ref.parameters()).grad, atol=1e-6)
    scaler.unscale_(opt)
    for p, q in zip(model.parameters(), ref.parameters()):
        assert torch.allclose(p.grad.cpu(), q.grad, atol=1e-6)


def test_amp_training_loop_with_grad_scaler():
    model, x, y = model_and_data()
    model.cuda()
    xc, yc = x.cuda(), y.cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)
    losses = []
    for _ in range(30):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.mse_loss(model(xc), yc)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert scaler.get_scale() == 1024.0  # no overflow, and growth_interval (2000) not reached


def test_grad_scaler_skips_step_on_inf_and_backs_off():
    model, x, y = model_and_data()
    model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    before = [p.detach().clone() for p in model.parameters()]
    scaler.scale(nn.functional.mse_loss(model(x.cuda()), y.cuda())).backward()
    with torch.no_grad():
        next(model.parameters()).grad[0, 0] = float("inf")
    scaler.step(opt)
    scaler.update()
    for p, b in zip(model.parameters(), before):
        assert torch.equal(p.detach(), b)  # the step was skipped
    assert scaler.get_scale() == 32768.0  # backoff_factor 0.5


def test_grad_scaler_grows_after_growth_interval():
    model, x, y = model_and_data()
    model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda", init_scale=4.0, growth_interval=1)
    before = [p.detach().clone() for p in model.parameters()]
    scaler.scale(nn.functional.mse_loss(model(x.cuda()), y.cuda())).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 8.0
    assert any(not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before))


def test_legacy_cuda_amp_grad_scaler_state_dict_round_trip():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        scaler = torch.cuda.amp.GradScaler(init_scale=1024.0)
        other = torch.cuda.amp.GradScaler()
    assert scaler.is_enabled()
    state = scaler.state_dict()
    assert state["scale"] == 1024.0
    other.load_state_dict(state)
    assert other.get_scale() == 1024.0
