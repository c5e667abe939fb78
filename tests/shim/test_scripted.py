"""Devices written inside TorchScript code go where the policy says (devshim/scripted.py).

Each test failed before scripted code was rewritten: TorchScript ran ``device="cuda"`` as
written, which a CPU-only torch refuses (NotImplementedError: no CUDA backend)."""
import io

import pytest

torch = pytest.importorskip("torch")
from conftest import cpu_only  # noqa: E402
from devshim import record  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")


def made_on_cuda(x: torch.Tensor) -> torch.Tensor:
    here = torch.device("cuda", 0)
    y = x.cuda() + torch.zeros(2, device="cuda") + x.new_ones(2, device=here)
    return y.to("cuda:0") + torch.tensor([1.0, 2.0], device=torch.device("cuda"))


def places_with(x: torch.Tensor, d: torch.device) -> torch.Tensor:
    return x.to(d) + torch.zeros(2, device=d)


def passes_a_device(x: torch.Tensor) -> torch.Tensor:
    return places_with(x, torch.device("cuda"))


class OnCuda(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.lin(x.to("cuda")) + torch.ones(2, device="cuda:0")


def test_a_scripted_function_places_its_cuda_tensors_on_the_device_used(shim):
    x = torch.ones(2)
    scripted = torch.jit.script(made_on_cuda)
    result = scripted(x)
    assert result.device.type == "cpu"
    assert torch.equal(result, torch.tensor([3.0, 4.0]))
    hits = {(r["requested"], r["used"], r["call_site"]["file"]) for r in record.rows()
            if r["api"] == "torch.jit.script"}
    assert hits == {("cuda", "cpu", __file__), ("cuda:0", "cpu", __file__)}


def test_a_device_passed_to_another_scripted_function(shim):
    assert torch.equal(torch.jit.script(passes_a_device)(torch.ones(2)), torch.ones(2))


def test_a_scripted_module_runs_saved_loaded_and_frozen(shim):
    x = torch.ones(2)
    module = OnCuda().eval()
    expected = module(x)
    scripted = torch.jit.script(module)
    assert torch.equal(scripted(x), expected)
    buf = io.BytesIO()
    torch.jit.save(scripted, buf)
    buf.seek(0)
    assert torch.equal(torch.jit.load(buf)(x), expected)
    assert torch.jit.freeze(torch.jit.script(OnCuda().eval()))(x).shape == (2,)


def test_a_scripted_class_called_from_scripted_code(shim):
    @torch.jit.script
    class Maker:
        def __init__(self, n: int):
            self.n = n

        def make(self) -> torch.Tensor:
            return torch.zeros(self.n, device=torch.device("cuda"))

    def uses_maker(n: int) -> torch.Tensor:
        return Maker(n).make()

    assert torch.equal(torch.jit.script(uses_maker)(3), torch.zeros(3))


def test_code_scripted_before_activation_is_rewritten_at_activation(clean_env):
    import devshim

    def placed_early(x: torch.Tensor) -> torch.Tensor:
        return x.to("cuda:0")

    devshim.deactivate()
    scripted = torch.jit.script(placed_early)
    devshim.activate()
    try:
        assert scripted(torch.ones(2)).device.type == "cpu"
    finally:
        devshim.deactivate()


def test_an_archive_saved_without_the_shim_runs_under_it(clean_env):
    import devshim

    class Placed(torch.nn.Module):  # a class of its own: TorchScript reuses compiled types
        def forward(self, x):
            return x.to("cuda") + torch.ones(2, device="cuda:0")

    devshim.deactivate()
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(Placed()), buf)
    with pytest.raises((RuntimeError, NotImplementedError)):
        buf.seek(0)
        torch.jit.load(buf)(torch.ones(2))
    devshim.activate()
    try:
        buf.seek(0)
        assert torch.jit.load(buf)(torch.ones(2)).device.type == "cpu"
    finally:
        devshim.deactivate()


def test_a_device_compared_inside_scripted_code_follows_the_object_policy(clean_env):
    import devshim

    x = torch.ones(2)
    for policy, same in (("keep", False), ("redirect", True)):
        def compares_devices(x: torch.Tensor) -> bool:  # a new function: TorchScript caches
            return x.to("cuda").device == torch.device("cuda:0")

        clean_env.setenv("TORCHDEVICE_DEVICE_OBJECTS", policy)
        devshim.deactivate()
        devshim.activate()
        try:
            assert torch.jit.script(compares_devices)(x) is same, policy
            assert compares_devices(x) is same, policy  # as in eager code
        finally:
            devshim.deactivate()


def test_the_emit_hooks_set_before_are_chained_and_given_back(clean_env):
    import devshim

    devshim.deactivate()
    seen = []

    def placed(x: torch.Tensor) -> torch.Tensor:
        return x.to("cuda")

    torch._C._jit_set_emit_hooks(None, lambda fn: seen.append(fn.qualified_name))
    try:
        devshim.activate()
        assert torch.jit.script(placed)(torch.ones(2)).device.type == "cpu"
        assert seen and seen[-1].endswith("placed")
        devshim.deactivate()

        def placed_later(x: torch.Tensor) -> torch.Tensor:
            return x.to("cuda")

        assert "cuda" in str(torch.jit.script(placed_later).graph)  # as written
        assert seen[-1].endswith("placed_later")
    finally:
        devshim.deactivate()
        torch._C._jit_set_emit_hooks(None, None)


def test_a_graph_the_rewrite_cannot_handle_is_logged_and_left_as_compiled(shim, monkeypatch,
                                                                          caplog):
    from devshim import scripted

    def broken(graph, torch=None):
        raise RuntimeError("a graph of another torch")

    def placed_as_written(x: torch.Tensor) -> torch.Tensor:
        return x.to("cuda")

    monkeypatch.setattr(scripted, "rewrite_graph", broken)
    with caplog.at_level("ERROR", logger="devshim"):
        compiled = torch.jit.script(placed_as_written)  # scripting itself never fails
    assert "cuda" in str(compiled.graph)
    assert any("left as compiled: RuntimeError: a graph of another torch" in r.getMessage()
               for r in caplog.records)
