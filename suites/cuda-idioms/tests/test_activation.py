"""The shim is active in every test process the runner starts with the shim on."""
import os
import sys

import pytest

SHIM_ON = os.environ.get("ACTIVATE_TORCH_DEVICE") == "1"


@pytest.mark.skipif(not SHIM_ON, reason="baseline run: shim off")
def test_devshim_is_active():
    import devshim

    assert devshim.is_active()
    assert devshim.status()["activated_by_env"]


@pytest.mark.skipif(not SHIM_ON, reason="baseline run: shim off")
def test_torch_is_patched_on_first_import():
    import torch  # noqa: F401

    import devshim

    assert devshim.status()["torch_patched"]


def test_mps_fallback_is_set_with_the_shim():
    if SHIM_ON:
        assert os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK") == "1"
    else:
        assert "devshim" not in sys.modules
