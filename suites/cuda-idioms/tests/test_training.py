"""A small training loop written for CUDA: ``model.cuda()``, data ``.cuda()``, optimizer steps.

Each test checks results: the loss goes down, and a model trained on "cuda" ends with the same
weights (to float tolerance) as the same model trained on the CPU from the same seed.
"""
import copy

import pytest
import torch
from torch import nn


def make_mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 16), nn.ReLU(),
                         nn.Linear(16, 1))


def make_data(n=64, seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 8, generator=g)
    w = torch.randn(8, 1, generator=g)
    y = x @ w + 0.1 * torch.randn(n, 1, generator=g)
    return x, y


def train(model, x, y, opt_cls, steps, **opt_kwargs):
    opt = opt_cls(model.parameters(), **opt_kwargs)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, opt


def assert_same_params(cuda_model, cpu_model, atol=1e-5):
    for (name, a), (_, b) in zip(cuda_model.named_parameters(), cpu_model.named_parameters()):
        assert torch.allclose(a.detach().cpu(), b.detach(), atol=atol, rtol=1e-4), name


def test_model_cuda_returns_the_module_and_moves_parameters():
    model = make_mlp()
    moved = model.cuda()
    assert moved is model
    dev = torch.zeros(1, device="cuda").device
    assert all(p.device == dev for p in model.parameters())


def test_same_seed_same_initial_weights_on_cuda():
    cpu_model = make_mlp(seed=3)
    cuda_model = make_mlp(seed=3).cuda()
    assert_same_params(cuda_model, cpu_model, atol=0)


def test_sgd_loss_decreases_on_cuda():
    x, y = make_data()
    model = make_mlp().cuda()
    losses, _ = train(model, x.cuda(), y.cuda(), torch.optim.SGD, 30, lr=0.1)
    assert losses[-1] < 0.5 * losses[0]


def test_sgd_on_cuda_matches_cpu():
    x, y = make_data()
    cpu_model = make_mlp()
    cuda_model = copy.deepcopy(cpu_model).cuda()
    cpu_losses, _ = train(cpu_model, x, y, torch.optim.SGD, 20, lr=0.05, momentum=0.9)
    cuda_losses, _ = train(cuda_model, x.cuda(), y.cuda(), torch.optim.SGD, 20,
                           lr=0.05, momentum=0.9)
    assert cuda_losses == pytest.approx(cpu_losses, rel=1e-4, abs=1e-6)
    assert_same_params(cuda_model, cpu_model)


def test_adam_on_cuda_matches_cpu_and_keeps_state_on_device():
    x, y = make_data()
    device = torch.device("cuda")
    cpu_model = make_mlp()
    cuda_model = make_mlp().to(device)
    cpu_losses, _ = train(cpu_model, x, y, torch.optim.Adam, 25, lr=1e-2)
    cuda_losses, opt = train(cuda_model, x.to(device), y.to(device), torch.optim.Adam, 25, lr=1e-2)
    assert cuda_losses[-1] < cuda_losses[0]
    assert abs(cuda_losses[-1] - cpu_losses[-1]) <= 1e-3 * max(1.0, cpu_losses[-1])
    # Adam divides by sqrt(v): tiny float differences between devices grow a little more than SGD.
    assert_same_params(cuda_model, cpu_model, atol=1e-4)
    for p in cuda_model.parameters():
        assert opt.state[p]["exp_avg"].device == p.device


def test_classifier_reaches_high_accuracy_on_cuda():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(256, 2, generator=g)
    labels = ((x[:, 0] * x[:, 1]) > 0).long()  # XOR-like quadrants
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2)).cuda()
    xc, yc = x.cuda(), labels.cuda()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(80):
        opt.zero_grad()
        nn.functional.cross_entropy(model(xc), yc).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(xc).argmax(dim=1) == yc).float().mean().item()
    assert acc > 0.9


def test_conv_net_forward_backward_matches_cpu(monkeypatch):
    monkeypatch.setattr(torch.backends.cudnn, "benchmark", True)
    torch.manual_seed(0)
    cpu_net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    cuda_net = copy.deepcopy(cpu_net).cuda()
    x = torch.randn(5, 3, 8, 8)
    target = torch.tensor([0, 1, 2, 1, 0])
    loss_cpu = nn.functional.cross_entropy(cpu_net(x), target)
    loss_cuda = nn.functional.cross_entropy(cuda_net(x.cuda()), target.cuda())
    loss_cpu.backward()
    loss_cuda.backward()
    # Loose tolerance: cuDNN may use TF32 for convolutions on Ampere and later.
    assert abs(loss_cuda.item() - loss_cpu.item()) < 5e-3
    for a, b in zip(cuda_net.parameters(), cpu_net.parameters()):
        assert torch.allclose(a.grad.cpu(), b.grad, atol=5e-3, rtol=2e-2)
    # BatchNorm running statistics were updated on the device too.
    assert torch.allclose(cuda_net[1].running_mean.cpu(), cpu_net[1].running_mean, atol=1e-4)


def test_gradient_clipping_norm_matches_cpu():
    x, y = make_data()
    cpu_model = make_mlp()
    cuda_model = copy.deepcopy(cpu_model).cuda()
    nn.functional.mse_loss(cpu_model(x), y).backward()
    nn.functional.mse_loss(cuda_model(x.cuda()), y.cuda()).backward()
    n_cpu = nn.utils.clip_grad_norm_(cpu_model.parameters(), 0.5)
    n_cuda = nn.utils.clip_grad_norm_(cuda_model.parameters(), 0.5)
    assert abs(n_cuda.item() - n_cpu.item()) < 1e-4 * max(1.0, n_cpu.item())
    total = torch.sqrt(sum((p.grad.detach() ** 2).sum() for p in cuda_model.parameters()))
    assert total.item() <= 0.5 + 1e-4


def test_eval_outputs_move_back_to_cpu_for_metrics():
    x, _ = make_data(n=10)
    model = make_mlp().cuda().eval()
    with torch.no_grad():
        out = model(x.cuda()).cpu()
    expected = make_mlp().eval()(x).detach()
    assert out.shape == (10, 1)
    assert torch.allclose(out, expected, atol=1e-5)
