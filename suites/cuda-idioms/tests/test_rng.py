"""Reproducibility on CUDA: same seed, same numbers.

``torch.cuda.manual_seed(_all)``, ``torch.cuda.get_rng_state``/``set_rng_state``, a CUDA
``torch.Generator`` and ``fork_rng``. Numbers drawn on "cuda" are only compared with numbers drawn
on "cuda" (a GPU's generator is not the CPU's, so no CPU comparison).
"""
import torch
from torch import nn


def test_cuda_manual_seed_repeats_numbers():
    torch.cuda.manual_seed(1234)
    a = torch.randn(16, device="cuda")
    torch.cuda.manual_seed(1234)
    b = torch.randn(16, device="cuda")
    assert torch.equal(a.cpu(), b.cpu())


def test_different_seeds_give_different_numbers():
    torch.cuda.manual_seed(1)
    a = torch.rand(16, device="cuda")
    torch.cuda.manual_seed(2)
    b = torch.rand(16, device="cuda")
    assert not torch.equal(a.cpu(), b.cpu())
    assert ((a >= 0) & (a < 1)).all().item()


def test_manual_seed_all_repeats_numbers():
    torch.cuda.manual_seed_all(99)
    a = torch.randint(0, 1000, (32,), device="cuda")
    torch.cuda.manual_seed_all(99)
    b = torch.randint(0, 1000, (32,), device="cuda")
    assert torch.equal(a.cpu(), b.cpu())
    assert a.dtype == torch.int64


def test_torch_manual_seed_also_seeds_cuda():
    torch.manual_seed(7)
    a = torch.randn(8, device="cuda")
    torch.manual_seed(7)
    b = torch.randn(8, device="cuda")
    assert torch.equal(a.cpu(), b.cpu())


def test_initial_seed_reports_manual_seed():
    torch.cuda.manual_seed(4242)
    assert torch.cuda.initial_seed() == 4242


def test_get_and_set_rng_state_replay():
    torch.cuda.manual_seed(5)
    torch.randn(3, device="cuda")  # advance the generator a little
    state = torch.cuda.get_rng_state()
    assert state.dtype == torch.uint8 and state.dim() == 1
    first = torch.rand(10, device="cuda")
    torch.cuda.set_rng_state(state)
    replay = torch.rand(10, device="cuda")
    assert torch.equal(first.cpu(), replay.cpu())


def test_get_and_set_rng_state_all_replay():
    torch.cuda.manual_seed_all(6)
    states = torch.cuda.get_rng_state_all()
    assert len(states) == torch.cuda.device_count()
    first = torch.randn(5, device="cuda")
    torch.cuda.set_rng_state_all(states)
    assert torch.equal(first.cpu(), torch.randn(5, device="cuda").cpu())


def test_cuda_generator_object():
    g = torch.Generator(device="cuda")
    g.manual_seed(2024)
    assert g.initial_seed() == 2024
    a = torch.randn(4, 4, generator=g, device="cuda")
    g.manual_seed(2024)
    b = torch.randn(4, 4, generator=g, device="cuda")
    assert torch.equal(a.cpu(), b.cpu())
    assert g.device == torch.zeros(1, device="cuda").device


def test_generator_state_replay_and_randperm():
    g = torch.Generator(device=torch.device("cuda")).manual_seed(11)
    state = g.get_state()
    p1 = torch.randperm(50, generator=g, device="cuda")
    g.set_state(state)
    p2 = torch.randperm(50, generator=g, device="cuda")
    assert torch.equal(p1.cpu(), p2.cpu())
    assert sorted(p1.cpu().tolist()) == list(range(50))


def test_dropout_masks_repeat_with_seed():
    x = torch.ones(1000, device="cuda")
    drop = nn.Dropout(p=0.5).cuda().train()
    torch.cuda.manual_seed(3)
    a = drop(x)
    torch.cuda.manual_seed(3)
    b = drop(x)
    assert torch.equal(a.cpu(), b.cpu())
    kept = (a > 0).float().mean().item()
    assert 0.4 < kept < 0.6
    assert set(a.unique().cpu().tolist()) <= {0.0, 2.0}


def test_fork_rng_leaves_cuda_stream_of_numbers_untouched():
    torch.cuda.manual_seed(8)
    expected = torch.randn(6, device="cuda")
    torch.cuda.manual_seed(8)
    with torch.random.fork_rng(devices=[torch.cuda.current_device()]):
        torch.randn(100, device="cuda")
    got = torch.randn(6, device="cuda")
    assert torch.equal(expected.cpu(), got.cpu())


def test_seeded_init_on_cuda_is_reproducible():
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    a = nn.Linear(10, 10).cuda()
    noise_a = torch.randn(10, device="cuda")
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    b = nn.Linear(10, 10).cuda()
    noise_b = torch.randn(10, device="cuda")
    assert torch.equal(a.weight.detach().cpu(), b.weight.detach().cpu())
    assert torch.equal(noise_a.cpu(), noise_b.cpu())
