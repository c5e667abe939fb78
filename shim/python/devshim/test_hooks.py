"""Which test is running, for the redirection record's ``cuda_path_tests`` (devshim/record.py).

Two frameworks, one contract: ``record.test_started(name)`` as a test begins, with its name
inside its file as the runner's test targets spell it ("Class::test_x[params]", "test_x"), and
``record.test_finished()`` as it ends.

- pytest: ``pytest_plugin.py`` (``-p devshim.pytest_plugin``, which the runner adds to the
  command line of a shim run), from the start of a test's setup to the start of its teardown:
  a fixture that builds the test's model on "cuda" counts, a teardown's cache clearing does not.
- unittest: ``TestCase.run`` wrapped, set up and torn down included, while the redirection
  record is on (TORCHDEVICE_RECORD); a test pytest runs is pytest's (the wrapper then does
  nothing, as a test is running already).
"""

from __future__ import annotations

from devshim import patching, record


def unittest_name(case) -> str:
    """"Class::test_x" of a unittest TestCase (nested classes "Outer::Inner::test_x")."""
    return f"{type(case).__qualname__.replace('.', '::')}::{case._testMethodName}"


def pytest_name(nodeid: str) -> str:
    """The part of a pytest node id after its file: "Class::test_x[a-1]"."""
    return nodeid.split("::", 1)[1] if "::" in nodeid else nodeid


def _bracketing(original):
    def run(self, result=None):
        if record.current_test() is not None:
            return original(self, result)
        record.test_started(unittest_name(self))
        try:
            return original(self, result)
        finally:
            record.test_finished()

    return patching.wraps(original)(run)


def unittest_patch(case_module) -> patching.Patch:
    """A Patch of ``TestCase.run`` that brackets each test it runs (when none is running)."""
    return patching.Patch(case_module.TestCase, "run", _bracketing, apis=())


def install() -> None:
    """Brackets unittest's tests (now, or once ``unittest.case`` is imported) until the shim's
    patches are removed (``uninstalled``). Idempotent."""
    global _installed
    if _installed:
        return
    _installed = True
    import devshim

    devshim.after_import("unittest.case",
                         lambda module: patching.install_or_log(unittest_patch(module)))


def uninstalled() -> None:
    """The shim's patches were removed (devshim.patches.remove): ``install`` patches again."""
    global _installed
    _installed = False


_installed = False
