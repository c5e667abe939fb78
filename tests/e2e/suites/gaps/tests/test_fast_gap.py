"""A fast stand-in for a torch failure (no torch import): the message names a binding torch's
build lacks, which is how such failures read. E2E_GAP_FIXED=1 makes it pass."""
import os


def test_binding():
    if os.environ.get("E2E_GAP_FIXED") != "1":
        raise AttributeError("module 'torch._C' has no attribute '_cuda_e2e_binding'")


def test_assertion_of_the_test_itself_is_no_gap():
    if os.environ.get("E2E_GAP_FIXED") != "1":
        assert 1 + 1 == 3
