"""Imports a package the suite's environment lacks: collection fails with and without the shim,
which makes the file an environment entry of the gap log (install the module), not a shim gap."""

import devshim_e2e_not_installed  # noqa: F401


def test_runs():
    assert devshim_e2e_not_installed
