"""Input pipelines written for CUDA: ``DataLoader(pin_memory=True)``, batches moved with
``.cuda(non_blocking=True)``, with no worker process and with two. Batches that reach the device
must hold exactly the samples of the dataset, in order (or in the seeded shuffled order).
"""
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset


def make_dataset(n=40):
    x = torch.arange(n * 3, dtype=torch.float32).reshape(n, 3)
    y = torch.arange(n) % 4
    return TensorDataset(x, y)


class DictDataset(Dataset):
    """Samples as dicts, the shape Hugging Face-style code feeds a model."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"input_ids": torch.full((5,), i, dtype=torch.long), "label": torch.tensor(float(i))}


@pytest.mark.parametrize("num_workers", [0, 2])
def test_pinned_batches_reach_the_device_intact(num_workers):
    ds = make_dataset()
    loader = DataLoader(ds, batch_size=8, shuffle=False, pin_memory=True, num_workers=num_workers)
    seen_x, seen_y = [], []
    for xb, yb in loader:
        xb = xb.cuda(non_blocking=True)
        yb = yb.cuda(non_blocking=True)
        seen_x.append(xb)
        seen_y.append(yb)
    torch.cuda.synchronize()
    assert len(seen_x) == 5
    assert torch.equal(torch.cat(seen_x).cpu(), ds.tensors[0])
    assert torch.equal(torch.cat(seen_y).cpu(), ds.tensors[1])


@pytest.mark.parametrize("num_workers", [0, 2])
def test_dict_batches_moved_with_to_device(num_workers):
    device = torch.device("cuda")
    loader = DataLoader(DictDataset(), batch_size=4, pin_memory=True, num_workers=num_workers)
    total = torch.zeros((), device=device)
    shapes = []
    for batch in loader:
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        shapes.append(tuple(batch["input_ids"].shape))
        total += batch["input_ids"].sum() + batch["label"].sum()
    assert shapes == [(4, 5), (4, 5), (2, 5)]
    assert total.item() == 5 * 45 + 45


def test_seeded_shuffle_is_reproducible_on_device():
    ds = make_dataset()

    def order(seed):
        g = torch.Generator().manual_seed(seed)
        loader = DataLoader(ds, batch_size=10, shuffle=True, generator=g, pin_memory=True)
        return torch.cat([xb.cuda(non_blocking=True)[:, 0] for xb, _ in loader]).cpu()

    a, b = order(0), order(0)
    assert torch.equal(a, b)
    assert sorted((a / 3).long().tolist()) == list(range(40))
    assert not torch.equal(a, order(1))


def test_pin_memory_then_non_blocking_copy():
    x = torch.randn(256, 16)
    pinned = x.pin_memory()
    xc = pinned.cuda(non_blocking=True)
    torch.cuda.synchronize()
    assert torch.equal(xc.cpu(), x)


def test_pinned_factory_and_copy_into_device_buffer():
    staging = torch.empty(64, pin_memory=True)
    staging.copy_(torch.arange(64, dtype=torch.float32))
    device_buf = torch.zeros(64, device="cuda")
    device_buf.copy_(staging, non_blocking=True)
    torch.cuda.synchronize()
    assert device_buf.sum().item() == 64 * 63 / 2


def test_one_epoch_of_training_from_a_pinned_loader_matches_cpu():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=g)
    y = x.sum(dim=1, keepdim=True)
    ds = TensorDataset(x, y)

    def epoch(device, pin):
        torch.manual_seed(0)
        model = nn.Linear(4, 1).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        for xb, yb in DataLoader(ds, batch_size=16, pin_memory=pin):
            xb, yb = xb.to(device, non_blocking=pin), yb.to(device, non_blocking=pin)
            opt.zero_grad()
            nn.functional.mse_loss(model(xb), yb).backward()
            opt.step()
        return model.weight.detach().cpu(), model.bias.detach().cpu()

    w_cuda, b_cuda = epoch("cuda", True)
    w_cpu, b_cpu = epoch("cpu", False)
    assert torch.allclose(w_cuda, w_cpu, atol=1e-6) and torch.allclose(b_cuda, b_cpu, atol=1e-6)
