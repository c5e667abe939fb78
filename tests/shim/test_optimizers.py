"""Optimizers with capturable=True on the device a "cuda" request lands on
(devshim/optimizers.py). Failed before: torch asserted the parameters were on a CUDA-like
device at the first step."""
import pytest

torch = pytest.importorskip("torch")
from conftest import cpu_only  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")

OPTIMIZERS = ["Adam", "AdamW", "NAdam", "RAdam", "Adamax", "ASGD", "Adadelta", "RMSprop", "Rprop"]


def trained(cls, **options):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 3).cuda()
    optimizer = cls(model.parameters(), **options)
    for _ in range(3):
        optimizer.zero_grad()
        model(torch.ones(2, 3, device="cuda")).pow(2).sum().backward()
        optimizer.step()
    return model.weight.detach()


@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize("foreach", [False, True])
def test_capturable_steps_as_without_it(shim, name, foreach):
    cls = getattr(torch.optim, name)
    expected = trained(cls, capturable=False, foreach=foreach)
    assert torch.allclose(trained(cls, capturable=True, foreach=foreach), expected, atol=1e-6)


def test_torchs_list_is_its_own_again_after_deactivation(clean_env):
    import devshim

    devshim.deactivate()
    devshim.activate()
    optimizer_module = __import__("torch.optim.optimizer", fromlist=["x"])
    assert "cpu" in optimizer_module._get_capturable_supported_devices()
    devshim.deactivate()
    assert "cpu" not in optimizer_module._get_capturable_supported_devices()
