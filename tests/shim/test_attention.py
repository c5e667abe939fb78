"""scaled_dot_product_attention restricted to CUDA's kernels, on the device used
(devshim/attention.py). Failed before: "No viable backend for scaled_dot_product_attention"."""
import warnings

import pytest

torch = pytest.importorskip("torch")
from conftest import cpu_only  # noqa: E402
from devshim import record  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")

SDPBackend = torch.nn.attention.SDPBackend


def attention():
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 4, 8, device="cuda") for _ in range(3))
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


@pytest.mark.parametrize("kernels", [[SDPBackend.EFFICIENT_ATTENTION],
                                     [SDPBackend.CUDNN_ATTENTION],
                                     [SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]])
def test_cuda_kernels_named_run_on_the_device_used(shim, kernels):
    expected = attention()
    with torch.nn.attention.sdpa_kernel(kernels):
        assert torch.allclose(attention(), expected, atol=1e-5)
    assert torch.backends.cuda.math_sdp_enabled() and torch.backends.cuda.flash_sdp_enabled()
    assert {(r["api"], r["requested"], r["used"]) for r in record.rows()
            if r["api"] == "torch.nn.attention.sdpa_kernel"} == {
        ("torch.nn.attention.sdpa_kernel", "cuda", "cpu")}


def test_the_deprecated_context_manager_too(shim):
    expected = attention()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=False,
                                            enable_mem_efficient=True):
            assert torch.allclose(attention(), expected, atol=1e-5)


def test_a_kernel_the_device_has_is_exactly_what_was_named(shim):
    named = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]
    with torch.nn.attention.sdpa_kernel(named):
        assert torch.backends.cuda.flash_sdp_enabled()
        assert not torch.backends.cuda.math_sdp_enabled()
        attention()
    assert not [r for r in record.rows() if r["api"] == "torch.nn.attention.sdpa_kernel"]
