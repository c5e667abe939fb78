"""Mixed precision on this machine: autocast in its three spellings lands on the CPU with the dtype
asked for (float16 by default, as on CUDA), and GradScaler trains exactly like plain SGD."""
import copy
import warnings

import pytest

torch = pytest.importorskip("torch")
from conftest import cpu_only  # noqa: E402
from devshim import record  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")


def test_autocast_spellings(shim):
    a = torch.randn(4, 4, device="cuda")
    with torch.autocast(device_type="cuda"):
        assert (a @ a).dtype == torch.float16  # CUDA's default autocast dtype
        assert torch.is_autocast_enabled() and torch.is_autocast_enabled("cuda")
        assert torch.get_autocast_dtype("cuda") == torch.float16
    with torch.amp.autocast("cuda", dtype=torch.bfloat16):
        assert (a @ a).dtype == torch.bfloat16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with torch.cuda.amp.autocast():
            assert (a @ a).dtype == torch.float16
    with torch.autocast("cuda", enabled=False):
        assert (a @ a).dtype == torch.float32
    assert not torch.is_autocast_enabled()

    @torch.autocast("cuda")
    def decorated(x):
        return x @ x

    assert decorated(a).dtype == torch.float16
    names = {(r["api"], r["requested"], r["used"]) for r in record.rows()}
    assert ("torch.autocast", "cuda", "cpu") in names
    assert ("torch.cuda.amp.autocast", "cuda", "cpu") in names


def make(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


@pytest.mark.parametrize("spelling", ["torch.amp.GradScaler('cuda')", "torch.cuda.amp.GradScaler()",
                                      "torch.amp.GradScaler()"])
def test_grad_scaler_step_equals_plain_sgd(shim, spelling):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        scaler = eval(spelling)
    assert scaler.is_enabled()
    model = make(0).cuda()
    plain = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    plain_opt = torch.optim.SGD(plain.parameters(), lr=0.1)
    x, y = torch.randn(16, 4, device="cuda"), torch.randn(16, 2, device="cuda")
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1e9)
        scaler.step(opt)
        scaler.update()
        plain_opt.zero_grad()
        torch.nn.functional.mse_loss(plain(x), y).backward()
        plain_opt.step()
    for p, q in zip(model.parameters(), plain.parameters()):
        assert torch.equal(p, q)
    assert scaler.get_scale() == 65536.0


def test_grad_scaler_skips_a_step_with_inf_and_backs_off(shim):
    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)
    w = torch.nn.Parameter(torch.ones(2, device="cuda"))
    opt = torch.optim.SGD([w], lr=1.0)
    loss = (w * torch.tensor([float("inf"), 1.0], device="cuda")).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert torch.equal(w.detach(), torch.ones(2))
    assert scaler.get_scale() == 512.0


def test_autocast_training_with_scaler_runs(shim):
    model = make(1).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    x, y = torch.randn(8, 4, device="cuda"), torch.randn(8, 2, device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(x)
        assert out.dtype == torch.float16
        loss = torch.nn.functional.mse_loss(out.float(), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_autocast_state_of_cuda_answers_for_the_device_used(shim):
    # Lightning's FSDP precision asks the deprecated torch.get_autocast_gpu_dtype() inside an
    # autocast("cuda", dtype=bfloat16) block (tests_pytorch/plugins/precision/test_fsdp.py).
    with torch.autocast("cuda", dtype=torch.bfloat16):
        assert torch.get_autocast_gpu_dtype() == torch.get_autocast_dtype("cuda") == torch.bfloat16
        assert torch.is_autocast_enabled()
    cuda_dtype = torch.get_autocast_dtype("cuda")
    cpu_dtype = torch.get_autocast_dtype("cpu")
    try:
        torch.set_autocast_gpu_dtype(torch.float16)
        assert torch.get_autocast_gpu_dtype() == torch.get_autocast_dtype("cuda") == torch.float16
        with torch.autocast("cuda"):  # without a dtype: the one set for CUDA
            assert torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.float16
        torch.set_autocast_dtype("cuda", torch.bfloat16)
        assert torch.get_autocast_dtype("cuda") == torch.bfloat16
        torch.set_autocast_enabled("cuda", True)
        assert torch.is_autocast_enabled("cuda") and torch.is_autocast_enabled("cpu")
    finally:
        torch.set_autocast_enabled("cuda", False)
        torch.set_autocast_dtype("cuda", cuda_dtype)  # sets the CPU's too: restored after it
        torch.set_autocast_dtype("cpu", cpu_dtype)


def test_cuda_autocast_dtype_outside_a_block_is_cudas_own(shim):
    # mmengine's autocast(device_type="cuda") takes torch.get_autocast_gpu_dtype() before it opens
    # its block: CUDA's float16, not the CPU's bfloat16 (tests/test_optim/.../
    # test_optimizer_wrapper.py::TestAmpOptimWrapper::test_optim_context).
    assert not torch.is_autocast_enabled("cpu")
    assert torch.get_autocast_gpu_dtype() == torch.get_autocast_dtype("cuda") == torch.float16
    assert torch.get_autocast_dtype("cpu") == torch.bfloat16
    with torch.autocast("cuda", dtype=torch.bfloat16):
        assert torch.get_autocast_gpu_dtype() == torch.bfloat16
    assert torch.get_autocast_gpu_dtype() == torch.float16


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_cuda_autocast_keeps_a_dtype_cuda_takes_and_the_cpu_would_refuse(shim, dtype):
    # CUDA autocast casts to any floating dtype asked for; torch's CPU autocast refuses all but
    # bfloat16 and float16, disabling itself with a warning CUDA never gives.
    conv = torch.nn.Conv2d(1, 1, 1).cuda()
    x = torch.randn(1, 1, 1, 1).cuda()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", "`torch.cuda.amp.autocast", FutureWarning)  # torch's own
        with torch.autocast("cuda", dtype=dtype):
            assert torch.is_autocast_enabled("cuda")
            assert conv(x).dtype == dtype
        with torch.cuda.amp.autocast(dtype=dtype):
            assert (x @ x.float()).dtype == dtype
    assert not torch.is_autocast_enabled("cpu")
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
        torch.autocast("cpu", dtype=dtype)  # asked for the CPU: torch's answer


def test_a_cuda_dtype_round_trip_outside_a_block_leaves_the_cpus_default(shim):
    # The pattern old = get("cuda"); set("cuda", x); ...; set("cuda", old) must leave the CPU's
    # own autocast dtype as it was, and a later autocast("cuda") on CUDA's.
    old = torch.get_autocast_dtype("cuda")
    try:
        torch.set_autocast_dtype("cuda", torch.bfloat16)
        assert torch.get_autocast_dtype("cuda") == torch.bfloat16
        torch.set_autocast_dtype("cuda", old)
        assert torch.get_autocast_dtype("cpu") == torch.bfloat16
        assert torch.get_autocast_dtype("cuda") == torch.float16
        with torch.autocast("cpu"):
            assert torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.bfloat16
        with torch.autocast("cuda"):
            assert torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.float16
            # Inside a block the kernels read the device used's dtype: the setter reaches it.
            torch.set_autocast_dtype("cuda", torch.bfloat16)
            assert torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.bfloat16
    finally:
        torch.set_autocast_dtype("cuda", old)
