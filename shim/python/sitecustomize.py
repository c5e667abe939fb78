"""devshim's sitecustomize: activates the redirection shim when ACTIVATE_TORCH_DEVICE=1.

The runner puts this folder first on PYTHONPATH. Python imports exactly one module named
``sitecustomize`` at start-up, so this one first runs any other ``sitecustomize`` found further
along ``sys.path`` (a virtual environment's, a distribution's), then activates devshim. Activation
never imports torch: devshim patches torch when the program first imports it.
"""

import os
import sys

# What start-up has already loaded, so that looking for a shadowed sitecustomize loads nothing:
# PathFinder is the finder importlib.machinery re-exports (importing importlib.machinery would
# load importlib and warnings, ~1 ms, in every process). importlib.util is imported only when
# there is another sitecustomize to run.
try:
    _PathFinder = sys.modules["_frozen_importlib_external"].PathFinder
except (KeyError, AttributeError):  # not CPython's import system: take the public name
    import importlib.machinery

    _PathFinder = importlib.machinery.PathFinder

_HERE = os.path.dirname(os.path.abspath(__file__))


def _chain_to_next_sitecustomize():
    """Run the sitecustomize that this one shadows, if there is one."""
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = _PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    if spec.origin and os.path.abspath(spec.origin) == os.path.abspath(__file__):
        return
    import importlib.util

    # Run it under a name of its own: ours is already "sitecustomize" in sys.modules.
    name = "_devshim_chained_sitecustomize"
    chained = importlib.util.spec_from_file_location(name, spec.origin)
    if chained is None or chained.loader is None:
        return
    module = importlib.util.module_from_spec(chained)
    sys.modules[name] = module
    chained.loader.exec_module(module)


try:
    _chain_to_next_sitecustomize()
finally:
    # Same truth values as devshim.requested_by_environment(); devshim is imported only when
    # active so that a baseline process carries no trace of the shim.
    if os.environ.get("ACTIVATE_TORCH_DEVICE", "").strip().lower() in ("1", "true", "yes", "on"):
        import devshim

        devshim.activate()
