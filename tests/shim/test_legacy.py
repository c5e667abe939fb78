"""The legacy CUDA tensor types on this machine: torch.cuda.FloatTensor & co., Tensor.type(...),
set_default_tensor_type."""
import warnings

import pytest

torch = pytest.importorskip("torch")
from conftest import cpu_only  # noqa: E402
from devshim import legacy  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")


@pytest.mark.parametrize("name", legacy.LEGACY_TYPES)
def test_legacy_types_build_tensors_of_their_dtype_on_the_device_used(shim, name):
    cls = getattr(torch.cuda, name)
    t = cls(3)
    assert t.shape == (3,) and t.dtype == getattr(torch, name).dtype and t.device.type == "cpu"
    assert isinstance(t, cls)
    assert torch.ones(2).type(cls).dtype == cls.dtype
    assert torch.ones(2).type(f"torch.cuda.{name}").dtype == cls.dtype


def test_legacy_types_take_data_and_sizes(shim):
    assert torch.cuda.LongTensor([1, 2]).tolist() == [1, 2]
    assert torch.cuda.LongTensor([1, 2]).dtype == torch.int64
    assert torch.cuda.FloatTensor(2, 3).shape == (2, 3)
    assert torch.cuda.FloatTensor([[1, 2]]).sum().item() == 3.0
    assert not isinstance(torch.ones(2, dtype=torch.int64), torch.cuda.FloatTensor)


def test_tensor_type_without_argument_tells_the_truth(shim):
    x = torch.ones(2).type("torch.cuda.FloatTensor")
    assert x.type() == "torch.FloatTensor"
    assert x.is_cuda is False
    assert torch.ones(2).type(torch.float64).dtype == torch.float64
    assert torch.ones(2).type("torch.DoubleTensor").dtype == torch.float64


def test_set_default_tensor_type(shim):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.set_default_tensor_type(torch.cuda.DoubleTensor)
            assert torch.zeros(1).dtype == torch.float64
            torch.set_default_tensor_type("torch.cuda.FloatTensor")
            assert torch.zeros(1).dtype == torch.float32
        finally:
            torch.set_default_tensor_type(torch.FloatTensor)
