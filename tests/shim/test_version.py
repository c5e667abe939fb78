"""devshim has one version: the shim package's ``__version__``, which the runner reports too.

CMakeLists.txt reads it from shim/python/devshim/__init__.py into the runner (DEVSHIM_VERSION).
ctest runs this file again as runner_version_is_the_shims, with DEVSHIM_RUNNER naming the runner
built from this tree, whose ``--version`` must then name the same version.
"""
import os
import re
import subprocess

import pytest

import devshim


def test_the_version_is_one_cmake_accepts():
    # CMake's project(VERSION) takes numbers only: a suffix such as 0.3.0rc1 fails the configure.
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", devshim.__version__), devshim.__version__


@pytest.mark.skipif("DEVSHIM_RUNNER" not in os.environ,
                    reason="DEVSHIM_RUNNER (the runner built from this tree) is not set")
def test_the_runner_reports_the_shims_version():
    runner = os.environ["DEVSHIM_RUNNER"]
    out = subprocess.run([runner, "--version"], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    lines = out.splitlines()
    assert lines[0] == f"runner {devshim.__version__}"
    # Then the build's facts, one "name: value" line each (runner/cli/build_info.h).
    facts = dict(line.split(": ", 1) for line in lines[1:])
    assert list(facts) == ["commit", "platform", "build"], lines
    assert re.fullmatch(r"[0-9a-f]{12}(\+dirty)?|unknown", facts["commit"]), facts
    assert re.fullmatch(r"[a-z]+-[a-z0-9_]+", facts["platform"]), facts
