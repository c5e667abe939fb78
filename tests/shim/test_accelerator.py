"""torch.accelerator, torch.get_device_module and torch.device objects under the masquerade
(devshim/accelerator.py, devshim/devices.py): what accelerate's and transformers' device-agnostic
code calls. Each test fails without the shim's patch (torch on a CPU-only machine answers "no
accelerator" or raises "Cannot access accelerator device when none is available")."""
import copy
import pickle

import pytest

torch = pytest.importorskip("torch")
from conftest import active_shim, cpu_only, free_memory_held_still  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")


def recorded(api):
    from devshim import record

    return [r for r in record.rows() if r["api"] == api]


@pytest.fixture
def shim_redirecting_objects(clean_env):
    """The shim active with TORCHDEVICE_DEVICE_OBJECTS=redirect (the default, set anyway);
    deactivated and checked after."""
    clean_env.setenv("TORCHDEVICE_DEVICE_OBJECTS", "redirect")
    yield from active_shim()


def test_without_the_shim_torch_has_no_accelerator_here(clean_env):
    import devshim

    devshim.deactivate()
    # check_available: a CUDA build names CUDA as its accelerator even with no GPU to run on.
    assert torch.accelerator.current_accelerator(check_available=True) is None
    assert not torch.accelerator.is_available()
    if torch.backends.cuda.is_built():  # a CUDA build reads a bare index as CUDA's anyway
        assert torch.device(0) == torch.device("cuda", 0)
    else:
        with pytest.raises(RuntimeError, match="Cannot access accelerator"):
            torch.device(0)


def test_accelerator_queries_agree_with_torch_cuda(shim):
    acc = torch.accelerator.current_accelerator()
    assert acc.type == "cuda" and acc.index is None
    assert torch.accelerator.current_accelerator(check_available=True) == acc
    assert torch.accelerator.is_available() is torch.cuda.is_available() is True
    assert torch.accelerator.device_count() == torch.cuda.device_count() == 1
    assert torch.accelerator.current_device_index() == torch.cuda.current_device() == 0
    torch.accelerator.set_device_index(0)
    torch.accelerator.set_device_index("cuda:3")  # a device that does not exist lands on 0
    assert torch.accelerator.current_device_index() == 0
    torch.accelerator.synchronize()
    torch.accelerator.synchronize(0)
    assert recorded("torch.accelerator.current_accelerator")
    assert {r["requested"] for r in recorded("torch.accelerator.set_device_index")} == {"cuda:0",
                                                                                      "cuda:3"}


def test_device_index_context(shim):
    with torch.accelerator.device_index(0):
        assert torch.accelerator.current_device_index() == 0
    with torch.accelerator.device_index(None):
        pass
    assert recorded("torch.accelerator.device_index")


def test_accelerator_memory_is_torch_cuda_s(shim):
    assert torch.accelerator.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert torch.accelerator.max_memory_allocated(0) == torch.cuda.max_memory_allocated()
    assert torch.accelerator.memory_reserved() == torch.cuda.memory_reserved()
    assert torch.accelerator.max_memory_reserved() == torch.cuda.max_memory_reserved()
    free, total = torch.accelerator.get_memory_info()
    assert (free, total)[1] == torch.cuda.mem_get_info()[1] and 0 < free <= total
    assert torch.accelerator.memory_stats() == torch.cuda.memory_stats()
    torch.accelerator.reset_peak_memory_stats()
    torch.accelerator.reset_accumulated_memory_stats()
    torch.accelerator.empty_cache()
    caps = torch.accelerator.get_device_capability()
    assert torch.float32 in caps["supported_dtypes"] and torch.bfloat16 in caps["supported_dtypes"]


def test_the_cpu_module_answers_cuda_s_memory_queries_for_the_device_objects_it_stands_for(
        shim_redirecting_objects):
    # diffusers' AutoOffloadStrategy (and other device-agnostic code) reaches the device module
    # through the device object: getattr(torch, device.type). "cuda:0" is built as the CPU here,
    # and torch.cpu has no memory queries ("Do not know how to obtain memory info").
    from unittest import mock

    device = torch.device("cuda:0")
    module = getattr(torch, device.type)
    assert module is torch.cpu
    with free_memory_held_still():
        assert module.mem_get_info(device.index) == torch.cuda.mem_get_info()
    x = torch.ones(1024, device="cuda")
    assert module.memory_allocated() == torch.cuda.memory_allocated() >= x.numel() * 4
    assert module.max_memory_allocated() == torch.cuda.max_memory_allocated()
    assert module.memory_reserved() == torch.cuda.memory_reserved()
    assert module.max_memory_reserved() == torch.cuda.max_memory_reserved()
    assert module.memory_stats() == torch.cuda.memory_stats()
    module.reset_peak_memory_stats()
    module.empty_cache()
    # Each asks torch.cuda when called, so a test's mock of torch.cuda applies.
    with mock.patch.object(torch.cuda, "mem_get_info", return_value=(7, 80)):
        assert module.mem_get_info(device.index) == (7, 80)
    assert recorded("torch.cuda.mem_get_info")  # what answered, at the program's call site
    assert torch.cpu.current_device() == "cpu"  # what torch.cpu has stays torch's


def test_the_cpu_module_gets_nothing_when_the_shim_is_off(clean_env):
    import devshim

    devshim.deactivate()
    assert not hasattr(torch.cpu, "mem_get_info") and not hasattr(torch.cpu, "memory_allocated")


def test_the_mps_module_gains_the_queries_it_lacks_when_mps_is_the_device(clean_env, monkeypatch):
    # On a Mac redirect builds "cuda:0" as mps:0, and getattr(torch, "mps") has empty_cache of its
    # own but no mem_get_info. Planned against a stand-in torch.mps: this machine has no MPS.
    import types
    from unittest import mock

    import devshim
    from devshim import accelerator, runtime
    from devshim.patching import MASQUERADE

    devshim.deactivate()
    mps = types.ModuleType("torch.mps")
    mps.empty_cache = lambda: None
    monkeypatch.setattr(torch, "mps", mps)
    monkeypatch.setattr(runtime, "used_type", "mps")
    planned = accelerator.plan(torch)
    patches = [p for p in planned if p.owner is mps]
    assert {p.name for p in patches} == set(accelerator.MEMORY_QUERIES) - {"empty_cache"}
    assert all(p.when == MASQUERADE and p.apis == (f"torch.mps.{p.name}",) for p in patches)
    assert not any(p.owner is torch.cpu for p in planned)  # the CPU is not the device in use
    query = next(p for p in patches if p.name == "mem_get_info").make(None)
    assert query.__module__ == "torch.mps"
    with mock.patch.object(torch.cuda, "mem_get_info", return_value=(7, 80)):
        assert query(0) == (7, 80)  # torch.cuda's answer, asked at call time


def test_accelerator_streams_are_torch_cuda_s(shim):
    s = torch.accelerator.current_stream()
    assert s == torch.cuda.current_stream() and s.is_capturing() is False
    other = torch.cuda.Stream()
    torch.accelerator.set_stream(other)
    try:
        assert torch.cuda.current_stream() == other
    finally:
        torch.accelerator.set_stream(s)


def test_optimizer_step_asks_the_accelerator_stream_if_it_captures(shim):
    # torch.optim.Optimizer checks torch.accelerator.current_stream().is_capturing() once the
    # accelerator says "cuda".
    p = torch.nn.Parameter(torch.ones(2, device="cuda"))
    opt = torch.optim.Adam([p], lr=0.1)
    p.sum().backward()
    opt.step()
    assert p.detach().tolist() == pytest.approx([0.9, 0.9])


def test_get_device_module(shim):
    assert torch.get_device_module() is torch.cuda
    assert torch.get_device_module("cuda:0") is torch.cuda
    assert torch.get_device_module(torch.device("cuda", 5)) is torch.cuda  # as written
    assert torch.get_device_module("cpu") is torch.cpu
    assert recorded("torch.get_device_module")


def test_a_bare_index_means_a_cuda_device(shim_keeping_objects):
    # accelerate: set_module_tensor_to_device(model, name, 0) calls torch.device(0).
    assert torch.device(0) == torch.device("cuda", 0)
    assert torch.device(0).type == "cuda"  # keep: as written
    assert torch.ones(2).to(torch.device(0)).device.type == "cpu"


def test_a_bare_index_is_the_device_used_by_default(shim):
    assert torch.device(0) == torch.device("cuda", 0) == torch.ones(2).cuda().device


def test_the_to_argument_parser_parses_devices_as_torch_device_builds_them(shim_keeping_objects):
    # tensordict's TensorDict.to(0) parses its arguments with torch._C._nn._parse_to, which
    # refused a bare index on a CPU build ("Cannot access accelerator device when none is
    # available"); Lightning's module .to() parses with it too.
    parse = torch._C._nn._parse_to
    assert parse(0)[0] == parse(device=0)[0] == torch.device(0) == torch.device("cuda", 0)
    assert parse(0)[0].type == "cuda"  # keep: as written
    assert parse("cuda")[0] == torch.device("cuda")
    assert parse(torch.float16) == (None, torch.float16, False, None)
    assert torch.nn.Linear(2, 2).to(0).weight.device.type == "cpu"


def test_redirect_applies_to_the_devices_the_to_argument_parser_builds(shim_redirecting_objects):
    parse = torch._C._nn._parse_to
    assert parse("cuda:0")[0].type == "cpu"
    assert recorded("torch.device")  # by the parser: no device object was built before
    assert parse("cuda:0")[0] == parse(0)[0] == parse(device=torch.device("cuda", 0))[0] == \
        torch.ones(1).cuda().device
    assert parse("cuda")[0] == torch.device("cuda")  # no tensor is on it: as written
    assert recorded("torch.device")


def test_keep_leaves_device_objects_as_written(shim_keeping_objects):
    d = torch.device("cuda", 0)
    assert (d.type, d.index) == ("cuda", 0)
    assert torch.ones(1).cuda().device != d  # identity fails, as on a CPU without the shim
    # torch.device stays torch's class under both settings; only its constructor is devshim's.
    assert type(d) is torch.device and isinstance(d, torch.device)
    assert not recorded("torch.device")


def test_redirect_makes_identity_assertions_hold(shim_redirecting_objects):
    model = torch.nn.Linear(3, 4).to("cuda")
    assert model.weight.device == torch.device("cuda", 0) == torch.device("cuda:0")
    assert model.weight.device == torch.device(0) == torch.device(type="cuda", index=0)
    assert torch.device("mps", 0).type == "cpu"
    assert torch.device("meta").type == "meta" and torch.device("cpu").type == "cpu"
    assert recorded("torch.device")


def test_redirect_builds_a_device_without_an_index_as_the_device_used(shim_redirecting_objects):
    # stable-baselines3 and mmengine compare types: `param.device.type ==
    # torch.device("cuda").type` after placing a model with that device (docs/shim.md).
    model = torch.nn.Linear(3, 4).to(torch.device("cuda"))
    assert model.weight.device.type == torch.device("cuda").type == "cpu"
    assert torch.device("cuda") == torch.device(type="cuda") == model.weight.device
    assert [r["requested"] for r in recorded("torch.device")].count("cuda") >= 1


def test_redirect_keeps_devices_no_tensor_can_be_on(shim_redirecting_objects):
    # An index beyond the devices the program sees stays as written: no tensor is ever there, so
    # neither identity nor type could hold. Using it still lands on the device used.
    for written in ("cuda:1", "cuda:64"):
        d = torch.device(written)
        assert str(d) == written
        assert torch.ones(1).to(d).device.type == "cpu"
    assert torch.device("cuda", 1).index == 1
    assert not [r for r in recorded("torch.device") if r["requested"] == "cuda:1"]


@pytest.fixture
def shim_redirecting_indexed_objects(clean_env):
    """The shim active with TORCHDEVICE_DEVICE_OBJECTS=redirect-indexed; checked after."""
    clean_env.setenv("TORCHDEVICE_DEVICE_OBJECTS", "redirect-indexed")
    yield from active_shim()


def test_redirect_indexed_keeps_a_device_without_an_index_as_written(
        shim_redirecting_indexed_objects):
    # accelerate keeps torch.device("cuda") as its device and sets up fp16 autocast and a
    # GradScaler because its type is "cuda": this setting leaves it so, and still builds an
    # object with an index that exists as the device used.
    model = torch.nn.Linear(3, 4).to("cuda")
    for written in ("cuda", "cuda:1", "mps"):
        d = torch.device(written)
        assert str(d) == written and model.weight.device != d
        assert torch.ones(1).to(d).device.type == "cpu"
    assert torch.device("cuda", 0) == model.weight.device
    assert not [r for r in recorded("torch.device") if r["requested"] in ("cuda", "cuda:1")]


def test_redirect_to_mps_builds_the_device_an_mps_tensor_has(shim_redirecting_objects,
                                                              monkeypatch):
    # An MPS tensor's device is mps:0, never bare "mps": identity needs the index.
    from devshim import devices, runtime

    monkeypatch.setattr(runtime, "redirect", lambda device: "mps")
    devices._made.clear()
    assert str(torch.device("cuda", 0)) == str(torch.device("cuda:0")) == "mps:0"
    devices._made.clear()


def test_redirected_device_objects_are_torch_devices(shim_redirecting_objects):
    d = torch.device("cuda")
    assert isinstance(d, torch.device) and isinstance(torch.ones(1).device, torch.device)
    assert issubclass(type(d), torch.device)
    assert isinstance(d, (str, torch.device))
    assert torch.device(d) == d
    assert pickle.loads(pickle.dumps(torch.device("cpu"))) == torch.device("cpu")
    assert copy.deepcopy(torch.device("meta")) == torch.device("meta")
    assert torch.ones(2).cuda(torch.device("cuda", 0)).device.type == "cpu"
    assert torch.nn.Linear(2, 2).cuda(torch.device("cuda")).weight.device.type == "cpu"


def test_a_pickled_device_loads_without_the_shim(shim_redirecting_objects):
    data = pickle.dumps({"device": torch.device("cpu")})
    shim_redirecting_objects.deactivate()
    loaded = pickle.loads(data)["device"]
    assert type(loaded) is torch.device and loaded == torch.device("cpu")
    assert torch.device("cuda", 0).type == "cuda"  # deactivate put torch's constructor back


def test_device_objects_setting():
    from devshim import config

    assert config.from_environ({}).device_objects == "redirect"
    keep = config.from_environ({"TORCHDEVICE_DEVICE_OBJECTS": " Keep "})
    assert keep.device_objects == "keep"
    bad = config.from_environ({"TORCHDEVICE_DEVICE_OBJECTS": "lie"})
    assert bad.device_objects == "redirect" and "TORCHDEVICE_DEVICE_OBJECTS" in bad.problems[0]


def test_every_construction_is_recorded_though_objects_are_reused(shim_redirecting_objects):
    # devices.py keeps what each argument tuple built; the record still counts every call.
    for _ in range(3):
        d = torch.device("cuda", 0)
    assert d.type == "cpu"
    assert sum(r["count"] for r in recorded("torch.device") if r["requested"] == "cuda:0") == 3


def test_settings_of_the_next_activation_apply_to_device_objects(clean_env):
    import devshim

    devshim.deactivate()
    clean_env.setenv("TORCHDEVICE_DEVICE_OBJECTS", "redirect")
    devshim.activate()
    try:
        assert torch.device("cuda", 0).type == "cpu"
    finally:
        devshim.deactivate()
    clean_env.setenv("TORCHDEVICE_DEVICE_OBJECTS", "keep")
    devshim.activate()
    try:
        assert torch.device("cuda", 0).type == "cuda"  # not the object the last activation made
    finally:
        devshim.deactivate()
