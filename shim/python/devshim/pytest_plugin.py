"""pytest plugin of the shim (``-p devshim.pytest_plugin``): brackets each test for the
redirection record (devshim/test_hooks.py), from the start of its setup to the start of its
teardown. It changes nothing else: no option, no fixture, no report."""

import pytest

from devshim import record, test_hooks


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    record.test_started(test_hooks.pytest_name(item.nodeid))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    record.test_finished()
