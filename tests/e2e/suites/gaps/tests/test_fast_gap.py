"""A fast stand-in for a torch failure (no torch import): the message names a binding torch's
build lacks, which is how such failures read; the test's own assertion is an `unattributed`
entry. E2E_GAP_FIXED=1 makes both pass."""
import os


def test_binding():
    if os.environ.get("E2E_GAP_FIXED") != "1":
        raise AttributeError("module 'torch._C' has no attribute '_cuda_e2e_binding'")


def test_assertion_of_the_test_itself():
    if os.environ.get("E2E_GAP_FIXED") != "1":
        assert 1 + 1 == 3
