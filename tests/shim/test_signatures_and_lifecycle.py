"""Robust patching: every patched callable keeps its signature and accepts the original's
parameters, activation is idempotent, deactivation restores every attribute; what the shim
carries (carried_apis, python -m devshim); modes on other hardware (faked)."""
import inspect
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
import devshim  # noqa: E402
from conftest import SHIM_DIR, cpu_only  # noqa: E402
from devshim import patching, runtime  # noqa: E402
from devshim.accelerator import MEMORY_QUERIES  # noqa: E402
from devshim.policy import Hardware  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")

P = inspect.Parameter


def signature(obj, **kwargs):
    try:
        return inspect.signature(obj, **kwargs)
    except (TypeError, ValueError):
        return None


def params(sig):
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


def own_parameters(replacement):
    """The parameters the replacement's code really takes (not the copied signature)."""
    if isinstance(replacement, type):
        init = replacement.__dict__.get("__init__")
        if init is None:
            return None
        return params(inspect.signature(init, follow_wrapped=False))[1:]  # without self
    return params(inspect.signature(replacement, follow_wrapped=False))


def accepts_the_originals(own, original):
    """Same parameters, or the original's first ones followed by *args, **kwargs (forwarding)."""
    if own == original:
        return True
    kinds = [k for _, k, _ in own]
    if P.VAR_KEYWORD not in kinds:
        return False
    head = [p for p in own if p[1] not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)]
    return original[:len(head)] == head


def patched_callables():
    return [(o, n, orig, new) for o, n, orig, new in patching.installed() if callable(orig)]


def test_every_patched_callable_keeps_its_signature(shim):
    checked = 0
    for owner, name, original, new in patched_callables():
        expected = signature(original)
        if expected is None:
            continue  # a C function or type without a signature
        where = f"{getattr(owner, '__name__', owner)}.{name}"
        assert signature(new) == expected, where
        own = own_parameters(new)
        if own is not None and name == "__new__":
            own = own[1:]  # a constructor replaced in place (devshim/native.py) also takes cls
        if own is not None:
            assert accepts_the_originals(own, params(expected)), (where, own, params(expected))
        checked += 1
    assert checked >= 60


def test_every_patched_callable_keeps_its_name(shim):
    for _, name, original, new in patched_callables():
        assert getattr(new, "__name__", name) == getattr(original, "__name__", name), name


def test_activation_is_idempotent_and_deactivate_restores_everything(clean_env):
    devshim.deactivate()
    tensor_dict = dict(vars(torch.Tensor))
    devshim.activate()
    first = patching.installed()
    devshim.activate()
    assert patching.installed() == first  # nothing patched twice
    assert len(first) == len({(id(o), n) for o, n, _, _ in first})
    devshim.deactivate()
    assert patching.installed() == []
    for owner, name, original, _ in first:
        assert getattr(owner, name, patching.MISSING) is original, name
    assert not torch.cuda.is_available()
    assert dict(vars(torch.Tensor)) == tensor_dict  # inherited methods were deleted, not shadowed
    devshim.activate()
    assert len(patching.installed()) == len(first)
    devshim.deactivate()


def test_carried_apis(clean_env):
    carried, raising = devshim.carried_apis(), devshim.raising_apis()
    assert carried == sorted(carried) and raising == sorted(raising)
    assert {"torch.zeros", "torch.Tensor.cuda", "torch.Tensor.to", "torch.Tensor.type",
            "torch.nn.Module.cuda", "torch.load", "torch.Generator", "torch.autocast",
            "torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler", "torch.set_default_device",
            "torch.cuda.get_device_properties", "torch.cuda.FloatTensor", "torch.cuda.Stream",
            "torch.cuda.Event.elapsed_time", "torch.cuda.manual_seed_all",
            "torch.cuda.mem_get_info", "torch.distributed.init_process_group",
            "torch.utils.data.DataLoader", "torch.cuda.nvtx.range_push"} <= set(carried)
    assert {"torch.cuda.CUDAGraph", "torch.cuda.graph",
            "torch.cuda.make_graphed_callables"} <= set(raising)
    assert not set(carried) & set(raising)


# Bindings that only a CUDA build of torch has; the masquerade adds them where they are missing.
CUDA_BUILD_ONLY = {"torch._C._cuda_getCurrentRawStream", "torch._C._cuda_setStream",
                   "torch._C._cuda_setDevice", "torch._C._cuda_getCompiledVersion",
                   "torch._C._cuda_cudaCachingAllocator_is_enabled",
                   "torch._C._cuda_cudaCachingAllocator_enable",
                   "torch._C._cuda_clearCublasWorkspaces"}


def test_every_carried_api_exists_in_torch(clean_env):
    devshim.deactivate()
    for name in devshim.carried_apis() + devshim.raising_apis():
        if name in CUDA_BUILD_ONLY and not torch.cuda._is_compiled():
            continue
        module, _, query = name[len("torch."):].partition(".")
        if module in ("cpu", "mps") and query in MEMORY_QUERIES:
            # The device's module lacks them; the masquerade adds them, calling torch.cuda's.
            assert not hasattr(getattr(torch, module), query), name
            name = "torch.cuda." + query
        obj = torch
        for part in name.split(".")[1:]:
            if obj is torch.backends.cuda.cufft_plan_cache:
                # torch's manager reads the current device's cache (which needs CUDA) for any
                # attribute: they are those cuFFTPlanCache defines.
                assert part in vars(torch.backends.cuda.cuFFTPlanCache), name
                break
            assert hasattr(obj, part), name
            obj = getattr(obj, part)


def start_devshim(*args, activate=False):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TORCHDEVICE_")
           and k not in ("TORCH_ALLOW_REDIRECTS", "ACTIVATE_TORCH_DEVICE")}
    env["PYTHONPATH"] = str(SHIM_DIR)
    if activate:
        env["ACTIVATE_TORCH_DEVICE"] = "1"
    return subprocess.Popen([sys.executable, "-m", "devshim", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def output(process):
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return json.loads(out)


def test_python_m_devshim_carried_and_status_json(clean_env):
    carried = start_devshim("carried", "--json")  # both at once: each imports torch
    status = start_devshim("status", "--json", activate=True)
    doc = output(carried)
    assert set(doc) == {"carried", "raises_not_implemented"}
    assert doc["carried"] == devshim.carried_apis()
    assert doc["raises_not_implemented"] == devshim.raising_apis()
    doc = output(status)
    assert doc["active"] and doc["torch_patched"] and doc["activated_by_env"]
    assert (doc["mode"], doc["cuda_lands_on"], doc["masquerading"]) == ("redirect", "cpu", True)
    assert doc["hardware"] == {"accelerator": None, "mps": False, "cuda_device_count": 0}
    assert doc["patched_attributes"] > 100


@pytest.fixture
def fake_hardware(clean_env):
    def use(hw):
        devshim.deactivate()
        clean_env.setattr(runtime, "probe_hardware", lambda torch: hw)
        devshim.activate()
    yield use
    devshim.deactivate()


def test_a_cuda_machine_is_left_alone_without_torch_allow_redirects(fake_hardware):
    fake_hardware(Hardware(cuda_device_count=2))
    assert devshim.status()["mode"] == "passthrough"
    assert patching.installed() == []


def test_torch_allow_redirects_on_a_cuda_machine_leaves_torch_cuda_alone(fake_hardware, clean_env):
    clean_env.setenv("TORCH_ALLOW_REDIRECTS", "1")
    fake_hardware(Hardware(cuda_device_count=2))
    state = devshim.status()
    assert ((state["mode"], state["cuda_lands_on"], state["masquerading"])
            == ("redirect", "cuda", False))
    owners = {getattr(o, "__name__", "") for o, _, _, _ in patching.installed()}
    assert "torch.cuda" not in owners
    assert runtime.redirect("cuda:5") == "cuda:0" and runtime.redirect("cuda:1") is None
    assert runtime.redirect("cpu") == "cuda" and runtime.default_device == "cuda"


@pytest.fixture
def bound(clean_env):
    """runtime.configure on faked hardware (no patching: torch.mps cannot run here)."""
    yield runtime.configure
    runtime.configure(runtime.probe_hardware(torch))


def test_mps_machine_binds_the_policy_to_mps(bound):
    bound(Hardware(mps=True))
    assert (runtime.mode, runtime.used, runtime.masquerading) == ("redirect", "mps", True)
    assert runtime.redirect("cuda:1") == "mps" and runtime.default_device == "mps"
    assert runtime.redirect("cpu") == "mps" and runtime.redirect("mps") is None


def test_accelerator_only_policy_keeps_cpu(bound):
    bound(Hardware(mps=True), "accelerator-only")
    assert runtime.redirect("cpu") is None and runtime.redirect("cuda") == "mps"


def test_the_cpu_override_empties_the_cache(bound):
    bound(Hardware(mps=True))
    assert runtime.redirect("cpu") == "mps"
    assert runtime.redirect("cpu:-1") == "cpu"  # override on
    assert runtime.redirect("cpu") is None
    assert runtime.redirect("cuda") == "mps"
    assert runtime.redirect("cpu:-1") == "cpu"  # override off
    assert runtime.redirect("cpu") == "mps"
