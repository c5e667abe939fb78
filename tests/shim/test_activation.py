"""Activation of the devshim package: sitecustomize, chaining, laziness, idempotence."""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
SHIM_DIR = pathlib.Path(os.environ.get("DEVSHIM_SHIM_DIR", REPO_ROOT / "shim" / "python"))

PROBE = textwrap.dedent(
    """
    import json, os, sys
    state = {"torch_imported_at_start": "torch" in sys.modules,
             "devshim_loaded": "devshim" in sys.modules,
             "chained": os.environ.get("CHAINED_MARKER")}
    if state["devshim_loaded"]:
        import devshim
        state["active_before_torch"] = devshim.is_active()
        state["patched_before_torch"] = devshim.status()["torch_patched"]
    if os.environ.get("IMPORT_TORCH") == "1":
        import torch
        state["patched_after_torch"] = (sys.modules["devshim"].status()["torch_patched"]
                                        if state["devshim_loaded"] else None)
        state["torch_works"] = float(torch.ones(2).sum()) == 2.0
    print(json.dumps(state))
    """
)


def run_probe(env_extra, extra_path=()):
    env = {k: v for k, v in os.environ.items() if k not in ("ACTIVATE_TORCH_DEVICE", "PYTHONPATH")}
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join([str(SHIM_DIR), *map(str, extra_path)])
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_activates_with_the_environment_variable_without_importing_torch():
    state = run_probe({"ACTIVATE_TORCH_DEVICE": "1"})
    assert state["devshim_loaded"]
    assert state["active_before_torch"]
    assert not state["torch_imported_at_start"]
    assert not state["patched_before_torch"]


def test_patches_torch_when_the_program_first_imports_it():
    state = run_probe({"ACTIVATE_TORCH_DEVICE": "1", "IMPORT_TORCH": "1"})
    assert state["patched_after_torch"] is True
    assert state["torch_works"]


@pytest.mark.parametrize("value", ["", "0", "false"])
def test_stays_inactive_without_the_variable(value):
    state = run_probe({"ACTIVATE_TORCH_DEVICE": value} if value else {})
    assert not state["devshim_loaded"]


def test_chains_to_the_sitecustomize_it_shadows(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text(
        "import os\nos.environ['CHAINED_MARKER'] = 'ran'\n"
    )
    state = run_probe({"ACTIVATE_TORCH_DEVICE": "1"}, extra_path=[other])
    assert state["chained"] == "ran"
    assert state["active_before_torch"]
    # Chaining happens with the shim off too: the shim's presence never hides another one.
    state = run_probe({}, extra_path=[other])
    assert state["chained"] == "ran"


def test_activate_is_idempotent_and_deactivate_removes_the_hook():
    sys.path.insert(0, str(SHIM_DIR))
    try:
        import devshim

        devshim.deactivate()
        before = list(sys.meta_path)
        devshim.activate()
        devshim.activate()
        added = [f for f in sys.meta_path if f not in before]
        assert len(added) <= 1
        assert devshim.is_active()
        devshim.deactivate()
        assert not devshim.is_active()
        assert sys.meta_path == before
    finally:
        sys.path.remove(str(SHIM_DIR))


def modules_at_start(env_extra, with_shim):
    """The names in sys.modules of a fresh interpreter before its program imports anything.

    The probe imports json only after taking the list (a list is printed, built first).
    """
    env = {k: v for k, v in os.environ.items()
           if k not in ("ACTIVATE_TORCH_DEVICE", "PYTHONPATH", "PYTHONSTARTUP")}
    env.update(env_extra)
    if with_shim:
        env["PYTHONPATH"] = str(SHIM_DIR)
    code = "import sys; names = sorted(sys.modules); import json; print(json.dumps(names))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_activation_loads_no_module_but_its_own():
    # Issue 17 item 5: every test process pays for what activation imports; importlib.abc alone
    # pulled in importlib.resources, pathlib, tempfile, re, typing, ... (~26 ms).
    bare = modules_at_start({}, with_shim=False)
    active = modules_at_start({"ACTIVATE_TORCH_DEVICE": "1"}, with_shim=True)
    assert active - bare == {"sitecustomize", "devshim"}


def test_the_inactive_shim_loads_only_sitecustomize():
    bare = modules_at_start({}, with_shim=False)
    inactive = modules_at_start({}, with_shim=True)
    assert inactive - bare == {"sitecustomize"}


def test_a_process_that_may_not_write_bytecode_loads_the_shims_compiled_code():
    # The build compiles the shim (CMake target shim_bytecode). Without that, a test process with
    # PYTHONDONTWRITEBYTECODE=1 (common in containers) compiles sitecustomize.py and
    # devshim/__init__.py at every start: +6.6 ms of CPU each (bench/README.md).
    env = {k: v for k, v in os.environ.items()
           if k not in ("ACTIVATE_TORCH_DEVICE", "PYTHONPATH", "PYTHONSTARTUP")}
    env.update(ACTIVATE_TORCH_DEVICE="1", PYTHONPATH=str(SHIM_DIR), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-v", "-c", "pass"], env=env, capture_output=True,
                         text=True, check=True)
    for source in (SHIM_DIR / "sitecustomize.py", SHIM_DIR / "devshim" / "__init__.py"):
        cached = importlib.util.cache_from_source(str(source))
        assert f"# code object from {cached!r}" in out.stderr, (
            f"{source} was compiled at start, not loaded from {cached}: build the shim_bytecode "
            "target (cmake --build build)")


def test_the_import_hook_leaves_torch_importable_as_a_package():
    # The hook's loader is a plain delegating object (no importlib.abc): torch's submodules,
    # resources and spec must still resolve through it.
    code = textwrap.dedent(
        """
        import importlib.resources, sys
        import torch, torch.nn.functional
        print(type(torch.__spec__.loader).__name__,
              sys.modules["devshim"].status()["torch_patched"],
              importlib.resources.files("torch").joinpath("__init__.py").is_file())
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({"ACTIVATE_TORCH_DEVICE": "1", "PYTHONPATH": str(SHIM_DIR)})
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["_PatchingLoader", "True", "True"]
