"""The torch patches on this machine (no accelerator: every CUDA request lands on the CPU)."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "shim" / "python"))

torch = pytest.importorskip("torch")
import devshim  # noqa: E402
from devshim import patches  # noqa: E402

HAS_ACCELERATOR = torch.cuda.is_available() or torch.backends.mps.is_available()
pytestmark = pytest.mark.skipif(HAS_ACCELERATOR, reason="expectations below are for a CPU-only machine")


@pytest.fixture
def shim():
    original_zeros = torch.zeros
    devshim.activate()
    yield
    devshim.deactivate()
    assert torch.zeros is original_zeros


def test_factories_are_found_from_torch_itself():
    names = set(patches.carried_factories(torch))
    assert {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
            "linspace", "logspace", "eye", "tensor", "as_tensor", "empty_strided",
            "zeros_like", "randn_like"} <= names


def test_cuda_requests_land_on_the_device_actually_used(shim):
    assert torch.zeros(2, 3, device="cuda").device.type == "cpu"
    assert torch.tensor([1.0, 2.0], device="cuda:1").sum().item() == 3.0
    assert torch.arange(4, device=torch.device("cuda", 0)).tolist() == [0, 1, 2, 3]
    assert torch.randn(3, device="mps").device.type == "cpu"
    x = torch.ones(2)
    assert x.cuda().device.type == "cpu"
    assert x.to("cuda").device.type == "cpu"
    assert x.to("cuda", torch.float64).dtype == torch.float64
    assert x.to(device="cuda:0").device.type == "cpu"
    assert x.to(torch.float16).dtype == torch.float16  # not a device: untouched


def test_modules_move_too(shim):
    m = torch.nn.Linear(3, 2).cuda()
    assert m.weight.device.type == "cpu"
    assert m.to("cuda").weight.device.type == "cpu"


def test_meta_is_never_redirected(shim):
    assert torch.zeros(2, device="meta").device.type == "meta"


def test_torch_cuda_answers_for_the_device_used_and_agrees_with_itself(shim):
    assert torch.cuda.is_available()
    assert torch.cuda.device_count() == 1
    assert torch.cuda.current_device() == 0
    torch.cuda.synchronize()


def test_patched_functions_keep_their_names(shim):
    assert torch.zeros.__name__ == "zeros"
    assert torch.Tensor.to.__name__ == "to"


def test_deactivate_restores_torch(shim):
    devshim.deactivate()
    assert not torch.cuda.is_available()
    with pytest.raises((AssertionError, RuntimeError)):
        torch.zeros(1, device="cuda")
    devshim.activate()
