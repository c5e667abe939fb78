"""torch.backends.cuda.cufft_plan_cache while masquerading: an empty cache whose capacity is
kept (devshim/cufft.py)."""
import pytest

torch = pytest.importorskip("torch")
from conftest import active_shim, cpu_only  # noqa: E402
from devshim import record  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")


def test_the_cache_is_empty_and_keeps_its_capacity(shim):
    cache = torch.backends.cuda.cufft_plan_cache
    assert cache.size == 0
    assert cache.max_size == 4096  # CUDA's default
    cache.max_size = 32
    assert cache.max_size == 32 and cache[0].max_size == 32
    x = torch.randn(16, device="cuda")
    assert torch.equal(torch.fft.fft(x), torch.fft.fft(x.cpu()))
    cache.clear()
    assert cache.size == 0 and cache.max_size == 32


def test_the_cache_refuses_what_cudas_refuses(shim):
    cache = torch.backends.cuda.cufft_plan_cache
    with pytest.raises(RuntimeError, match="read-only property"):
        cache.size = 3
    with pytest.raises(RuntimeError, match="must be non-negative"):
        cache.max_size = -1


def test_any_spelling_of_the_device_reaches_the_cache(shim):
    cache = torch.backends.cuda.cufft_plan_cache
    # under redirect, torch.device("cuda") is the device used: torch's own lookup refused it
    same = [cache[d] for d in (0, "cuda", "cuda:0", torch.device("cuda"), torch.device("cuda", 0))]
    assert all(c is same[0] for c in same)


def test_uses_are_recorded_where_the_program_made_them(shim):
    cache = torch.backends.cuda.cufft_plan_cache
    cache.max_size = 8
    assert cache.size == 0
    rows = {r["api"]: r for r in record.rows()}
    for api in ("max_size", "size"):
        row = rows[f"torch.backends.cuda.cufft_plan_cache.{api}"]
        assert row["call_site"]["file"].endswith("test_cufft.py"), row


def test_each_activation_starts_at_the_default_capacity(clean_env):
    for _ in active_shim():
        torch.backends.cuda.cufft_plan_cache.max_size = 5
    for _ in active_shim():
        assert torch.backends.cuda.cufft_plan_cache.max_size == 4096
