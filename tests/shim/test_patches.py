"""Tensors and modules made and moved on this machine (no accelerator: every CUDA request lands on
the CPU): factories, Tensor/Module .to/.cuda/.new_*, storages, Generator, default devices."""
import pytest

torch = pytest.importorskip("torch")
from conftest import cpu_only  # noqa: E402
from devshim import patches, record  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")


def recorded(api):
    return [r for r in record.rows() if r["api"] == api]


def test_factories_are_found_from_torch_itself():
    names = set(patches.carried_factories(torch))
    assert {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
            "linspace", "logspace", "eye", "tensor", "as_tensor", "empty_strided",
            "zeros_like", "randn_like"} <= names


def test_cuda_requests_land_on_the_device_actually_used(shim):
    assert torch.zeros(2, 3, device="cuda").device.type == "cpu"
    assert torch.tensor([1.0, 2.0], device="cuda:1").sum().item() == 3.0
    assert torch.arange(4, device=torch.device("cuda", 0)).tolist() == [0, 1, 2, 3]
    assert torch.randn(3, device="mps").device.type == "cpu"
    assert torch.zeros_like(torch.ones(2), device="cuda").device.type == "cpu"
    x = torch.ones(2)
    assert x.cuda().device.type == "cpu"
    assert x.cuda(0, non_blocking=True).device.type == "cpu"
    assert x.to("cuda").device.type == "cpu"
    assert x.to(0).device.type == "cpu"
    assert x.to("cuda", torch.float64).dtype == torch.float64
    assert x.to(device="cuda:0").device.type == "cpu"
    assert x.to(torch.float16).dtype == torch.float16  # not a device: untouched
    assert x.new_zeros(3, device="cuda").device.type == "cpu"
    assert x.new_tensor([1, 2], device="cuda").tolist() == [1.0, 2.0]


def test_modules_move_too(shim):
    m = torch.nn.Linear(3, 2).cuda()
    assert m.weight.device.type == "cpu"
    assert m.to("cuda").weight.device.type == "cpu"
    assert m.to(torch.device("cuda:1"), torch.float64).weight.dtype == torch.float64
    assert torch.nn.Linear(3, 2, device="cuda").weight.device.type == "cpu"
    assert torch.nn.Linear(3, 2, device="meta").to_empty(device="cuda").weight.device.type == "cpu"


def test_storages_move_too(shim):
    s = torch.arange(4.0).untyped_storage()
    assert s.cuda().device.type == "cpu"
    assert s.to(device="cuda:0").device.type == "cpu"


def test_meta_is_never_redirected(shim):
    assert torch.zeros(2, device="meta").device.type == "meta"
    with torch.device("meta"):  # torch's DeviceContext still knows the (original) factories
        assert torch.zeros(2).device.type == "meta"
        assert torch.ones(2, device="cuda").device.type == "cpu"


def test_factories_documented_otherwise(shim):
    assert torch.scalar_tensor(1.0, device="cuda").device.type == "cpu"
    assert torch.normal(0.0, 1.0, (2,), device="cuda").device.type == "cpu"
    assert torch.normal(torch.zeros(2), torch.ones(2)).shape == (2,)
    assert torch.fft.fftfreq(4, device="cuda").device.type == "cpu"
    assert torch.fft.rfftfreq(4, device="cuda:0").device.type == "cpu"


def test_a_cuda_call_is_recorded_once_under_its_own_name(shim):
    torch.nn.Linear(2, 2).cuda()
    torch.ones(1).cuda()
    assert [r["count"] for r in recorded("torch.nn.Module.cuda")] == [1]
    assert [r["count"] for r in recorded("torch.Tensor.cuda")] == [1]
    assert recorded("torch.nn.Module.to") == [] and recorded("torch.Tensor.to") == []


def test_calls_from_inside_torch_are_counted_at_the_programs_call_site(shim):
    for _ in range(3):
        torch.nn.Linear(2, 2, device="cuda")  # nn.Linear calls torch.empty(device="cuda")
    torch.nn.Linear(2, 2, device="cuda")
    rows = recorded("torch.empty")
    assert len(rows) == 2
    assert sorted(r["count"] for r in rows) == [2, 6]  # weight and bias: 2 calls per Linear
    assert all(r["call_site"]["file"] == __file__ for r in rows)
    this_test = "test_calls_from_inside_torch_are_counted_at_the_programs_call_site"
    assert all(r["call_site"]["function"] == this_test for r in rows)


def site_one():
    return torch.zeros(1, device="cuda")


def site_two():  # the same bytecode: the call sits at the same f_lasti as in site_one
    return torch.zeros(1, device="cuda")


def test_sites_at_the_same_offset_and_fresh_device_objects_are_counted_right(shim):
    for _ in range(3):
        site_one()
        site_two()
        site_one()
    for i in range(4):
        torch.ones(1, device=torch.device("cuda", i % 2))
    counts = {(r["call_site"]["function"], r["requested"]): r["count"] for r in record.rows()}
    assert counts == {("site_one", "cuda"): 6, ("site_two", "cuda"): 3,
                      ("test_sites_at_the_same_offset_and_fresh_device_objects_are_counted_right",
                       "cuda:0"): 2,
                      ("test_sites_at_the_same_offset_and_fresh_device_objects_are_counted_right",
                       "cuda:1"): 2}


def test_generator_on_cuda(shim):
    g = torch.Generator(device="cuda")
    assert g.device.type == "cpu"
    assert isinstance(g, torch.Generator) and isinstance(torch.default_generator, torch.Generator)
    g.manual_seed(7)
    a = torch.randn(3, generator=g, device="cuda")
    g2 = torch.Generator("cuda:0").manual_seed(7)
    assert torch.equal(a, torch.randn(3, generator=g2))


def test_set_default_device_cuda(shim):
    try:
        torch.set_default_device("cuda")
        assert torch.get_default_device().type == "cpu"
        assert torch.zeros(2).device.type == "cpu"
    finally:
        torch.set_default_device(None)
    assert recorded("torch.set_default_device")


def test_a_function_patched_by_name_is_patched_once_when_its_docs_read_as_a_factorys(
        clean_env):
    # torch 2.14 documents set_default_device's parameter in the factories' words: the factories
    # read from the docs then named it too, and it was patched twice (its restore check failed,
    # and the generic wrapper sat over defaults.py's).
    from conftest import active_shim

    clean_env.setattr(torch.set_default_device, "__doc__", torch.set_default_device.__doc__ +
                      "\n    device (:class:`torch.device`, str, int, or None): the device\n")
    assert "set_default_device" in patches.carried_factories(torch)
    planned = [p for p in patches.plan(torch)
               if p.owner is torch and p.name == "set_default_device"]
    assert len(planned) == 1 and planned[0].apis == ("torch.set_default_device",)
    shim = active_shim()
    next(shim)
    try:
        torch.set_default_device("cuda")
        assert torch.get_default_device().type == "cpu"
    finally:
        torch.set_default_device(None)
        next(shim, None)  # deactivates and checks every attribute is restored


def test_torch_device_as_a_context_manager(shim_keeping_objects):
    with torch.device("cuda"):
        x = torch.ones(2)
    assert x.device.type == "cpu"
    assert recorded("torch.device.__enter__")


def test_torch_cuda_answers_for_the_device_used_and_agrees_with_itself(shim):
    assert torch.cuda.is_available()
    assert torch.cuda.device_count() == 1
    assert torch.cuda.current_device() == 0
    torch.cuda.synchronize()


def test_cpu_minus_one_toggles_the_override_for_explicit_cpu(shim):
    assert torch.zeros(1, device="cpu:-1").device.type == "cpu"
    assert torch.zeros(1, device="cpu").device.type == "cpu"
    assert torch.zeros(1, device="cpu:-1").device.type == "cpu"
    assert [r["requested"] for r in recorded("torch.zeros")] == ["cpu:-1", "cpu:-1"]


def test_patched_functions_keep_their_names(shim):
    assert torch.zeros.__name__ == "zeros"
    assert torch.Tensor.to.__name__ == "to"


def test_deactivate_restores_torch(shim):
    shim.deactivate()
    assert not torch.cuda.is_available()
    with pytest.raises((AssertionError, RuntimeError)):
        torch.zeros(1, device="cuda")
    shim.activate()
