"""Tensors created on and moved to "cuda", as CUDA-first code writes them.

Assertions are on values, shapes and dtypes. Where a device matters, a tensor is compared with
``torch.zeros(1, device="cuda").device``: the device that a request for "cuda" really lands on
(cuda on a GPU machine; whatever the shim uses elsewhere), never with the literal "cuda".
"""
import numpy as np
import pytest
import torch


def cuda_device():
    """The device a plain "cuda" request lands on."""
    return torch.zeros(1, device="cuda").device


def test_zeros_on_cuda_match_cpu():
    x = torch.zeros(4, 3, device="cuda")
    assert x.sum().item() == 0
    assert x.shape == (4, 3)


def test_move_with_dot_cuda_and_back():
    a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    b = a.cuda() * 2
    assert torch.equal(b.cpu(), a * 2)


def test_matmul_on_cuda_matches_cpu():
    torch.manual_seed(0)
    a = torch.randn(8, 5)
    b = torch.randn(5, 3)
    expected = a @ b
    got = (a.to("cuda") @ b.to("cuda")).cpu()
    assert torch.allclose(got, expected, atol=1e-6)


def test_cpu_math_needs_no_shim():
    assert torch.tensor([1.0, 2.0]).sum().item() == 3.0


def test_factories_with_device_cuda():
    ones = torch.ones(2, 3, device="cuda")
    full = torch.full((2, 2), 7.5, device="cuda")
    ar = torch.arange(5, device="cuda")
    eye = torch.eye(3, device="cuda")
    lin = torch.linspace(0, 1, 5, device="cuda")
    assert ones.sum().item() == 6
    assert torch.equal(full.cpu(), torch.full((2, 2), 7.5))
    assert ar.dtype == torch.int64 and ar.tolist() == [0, 1, 2, 3, 4]
    assert torch.equal(eye.cpu(), torch.eye(3))
    assert torch.allclose(lin.cpu(), torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0]))
    for t in (ones, full, ar, eye, lin):
        assert t.device == cuda_device()


def test_tensor_literal_on_cuda_keeps_dtype_and_values():
    x = torch.tensor([[1, 2], [3, 4]], dtype=torch.float64, device="cuda")
    assert x.dtype == torch.float64
    assert x.device == cuda_device()
    assert x.cpu().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert (x @ x).cpu().tolist() == [[7.0, 10.0], [15.0, 22.0]]


def test_torch_device_objects():
    dev = torch.device("cuda")
    dev0 = torch.device("cuda", 0)
    a = torch.arange(4.0, device=dev)
    b = torch.arange(4.0, device=dev0)
    c = torch.arange(4.0).to(torch.device("cuda:0"))
    assert a.device == b.device == c.device == cuda_device()
    assert torch.equal(a.cpu(), b.cpu()) and torch.equal(b.cpu(), c.cpu())


def test_cuda_zero_index_forms_agree():
    x = torch.arange(6.0).reshape(2, 3)
    forms = [x.cuda(), x.cuda(0), x.cuda("cuda:0"), x.cuda(torch.device("cuda", 0)),
             x.to("cuda:0"), x.to(device="cuda"),
             x.to(f"cuda:{torch.cuda.current_device()}")]
    for y in forms:
        assert y.device == cuda_device()
        assert torch.equal(y.cpu(), x)


def test_last_gpu_idiom_uses_an_existing_device():
    # Model-parallel code puts its last stage on the last GPU there is.
    last = f"cuda:{torch.cuda.device_count() - 1}"
    second = "cuda:1" if torch.cuda.device_count() > 1 else "cuda:0"
    a = torch.ones(3, device="cuda:0")
    b = torch.full((3,), 2.0, device=last)
    c = torch.full((3,), 3.0, device=second)
    total = a + b.to("cuda:0") + c.to(a.device)
    assert total.cpu().tolist() == [6.0, 6.0, 6.0]


def test_to_cuda_with_dtype():
    x = torch.tensor([1.5, 2.5, -3.25])
    h = x.to("cuda", torch.float16)
    d = x.to(device="cuda", dtype=torch.float64)
    assert h.dtype == torch.float16 and d.dtype == torch.float64
    assert h.device == d.device == cuda_device()
    assert h.float().cpu().tolist() == [1.5, 2.5, -3.25]
    assert d.cpu().tolist() == [1.5, 2.5, -3.25]


def test_to_another_tensor_takes_its_device_and_dtype():
    ref = torch.zeros(1, dtype=torch.float64, device="cuda")
    x = torch.tensor([1, 2, 3]).to(ref)
    assert x.dtype == torch.float64 and x.device == ref.device
    assert x.cpu().tolist() == [1.0, 2.0, 3.0]


def test_like_factories_follow_a_cuda_tensor():
    base = torch.randn(3, 4, device="cuda")
    z = torch.zeros_like(base)
    o = torch.ones_like(base, dtype=torch.int32)
    e = torch.empty_like(base)
    f = torch.full_like(base, 2.0)
    r = torch.rand_like(base)
    for t in (z, o, e, f, r):
        assert t.shape == (3, 4) and t.device == base.device
    assert z.sum().item() == 0 and o.dtype == torch.int32 and o.sum().item() == 12
    assert f.sum().item() == 24.0
    assert ((r >= 0) & (r < 1)).all().item()


def test_like_factories_with_device_cuda_from_cpu_tensor():
    base = torch.arange(6.0).reshape(2, 3)
    z = torch.zeros_like(base, device="cuda")
    o = torch.ones_like(base, device=torch.device("cuda", 0))
    assert z.device == o.device == cuda_device()
    assert z.shape == o.shape == (2, 3)
    assert (o - z).sum().item() == 6


def test_new_factories_of_a_cuda_tensor():
    base = torch.ones(2, device="cuda", dtype=torch.float64)
    n = base.new_zeros(3, 3)
    t = base.new_tensor([1, 2])
    f = base.new_full((2,), 4)
    assert n.device == t.device == f.device == base.device
    assert n.dtype == t.dtype == f.dtype == torch.float64
    assert t.cpu().tolist() == [1.0, 2.0] and f.cpu().tolist() == [4.0, 4.0]


def test_legacy_cuda_tensor_types():
    f = torch.cuda.FloatTensor([1.0, 2.0, 3.0])
    lng = torch.cuda.LongTensor([4, 5])
    sized = torch.cuda.FloatTensor(2, 3)
    assert f.dtype == torch.float32 and f.cpu().tolist() == [1.0, 2.0, 3.0]
    assert lng.dtype == torch.int64 and lng.cpu().tolist() == [4, 5]
    assert sized.shape == (2, 3) and sized.dtype == torch.float32
    assert f.device == lng.device == sized.device == cuda_device()


def test_type_string_to_cuda_float():
    x = torch.tensor([1, 2, 3])
    y = x.type("torch.cuda.FloatTensor")
    z = x.type(torch.cuda.DoubleTensor)
    assert y.dtype == torch.float32 and z.dtype == torch.float64
    assert y.device == z.device == cuda_device()
    assert y.cpu().tolist() == [1.0, 2.0, 3.0] and z.cpu().tolist() == [1.0, 2.0, 3.0]


def test_numpy_round_trip_through_cuda():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = torch.from_numpy(a).cuda()
    y = torch.as_tensor(a, device="cuda")
    back = (x + y).cpu().numpy()
    np.testing.assert_array_equal(back, 2 * a)


def test_non_blocking_copies_and_indexing():
    x = torch.arange(10.0)
    xc = x.cuda(non_blocking=True)
    idx = torch.tensor([9, 0, 3]).to("cuda", non_blocking=True)
    torch.cuda.synchronize()
    assert xc[idx].cpu().tolist() == [9.0, 0.0, 3.0]
    mask = xc > 6
    assert xc[mask].cpu().tolist() == [7.0, 8.0, 9.0]
    assert torch.where(mask, xc, torch.zeros_like(xc)).sum().item() == 24.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.bool])
def test_dtypes_survive_cuda_round_trip(dtype):
    x = (torch.arange(8) % 3).to(dtype)
    y = x.cuda()
    assert y.dtype == dtype
    assert torch.equal(y.cpu(), x)
