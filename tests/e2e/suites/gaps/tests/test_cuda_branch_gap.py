"""A test whose CUDA check runs only where CUDA is (gpytorch's and torcheval's shape): without the
shim it passes without running that code; under the shim the branch runs and its own mistake
fails. No torch frame explains it, so it is an `unattributed` entry that says the code is in a
CUDA-only branch."""
import torch


def test_check_on_cpu_then_on_cuda():
    x = torch.ones(2)
    assert x.sum().item() == 2
    if torch.cuda.is_available():
        y = x.to("cuda")
        assert y.sum().item() == 3
