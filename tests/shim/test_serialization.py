"""torch.load on this machine: checkpoints saved from CUDA tensors, with and without map_location
(string, torch.device, dict, callable)."""
import io
import zipfile

import pytest

torch = pytest.importorskip("torch")
from conftest import cpu_only  # noqa: E402
from devshim import record  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")

STATE = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.ones(3, dtype=torch.float64)}


def saved_on(location):
    """A checkpoint of STATE whose storages say they were saved on ``location``."""
    buf = io.BytesIO()
    torch.save(STATE, buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    pickled_location = b"X" + len(location.encode()).to_bytes(4, "little") + location.encode()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith("/data.pkl"):
                data = data.replace(b"X\x03\x00\x00\x00cpu", pickled_location)
            dst.writestr(info, data)
    return out.getvalue()


def equal(state):
    return state.keys() == STATE.keys() and all(
        torch.equal(state[k], STATE[k]) and state[k].device.type == "cpu" for k in STATE)


def test_the_fixture_really_makes_a_cuda_checkpoint(clean_env):
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(io.BytesIO(saved_on("cuda:0")))


@pytest.mark.parametrize("map_location", [None, "cuda", "cuda:1", torch.device("cuda", 0), "cpu",
                                          {"cuda:1": "cpu"}, {"cuda:1": "cuda:0"},
                                          {"cuda:0": "cpu"}])
def test_loading_a_cuda_checkpoint(shim, map_location):
    assert equal(torch.load(io.BytesIO(saved_on("cuda:1")), map_location=map_location))


def test_a_file_path_and_weights_only(shim, tmp_path):
    path = tmp_path / "ck.pt"
    path.write_bytes(saved_on("cuda:0"))
    assert equal(torch.load(path, weights_only=True))
    assert equal(torch.load(str(path), "cuda", mmap=True))
    rows = [r for r in record.rows() if r["api"] == "torch.load"]
    assert {(r["requested"], r["used"]) for r in rows} == {("cuda:0", "cpu"), ("cuda", "cpu")}


def test_callables_are_left_alone(shim):
    seen = []

    def restore(storage, location):
        seen.append(location)
        return storage

    assert equal(torch.load(io.BytesIO(saved_on("cuda:0")), map_location=restore))
    assert seen == ["cuda:0", "cuda:0"]
    storage_cuda = torch.load(io.BytesIO(saved_on("cuda:1")), map_location=lambda s, loc: s.cuda(0))
    assert equal(storage_cuda)


def test_a_cpu_checkpoint_is_not_recorded(shim):
    buf = io.BytesIO()
    torch.save(STATE, buf)
    buf.seek(0)
    assert equal(torch.load(buf))
    assert [r for r in record.rows() if r["api"] == "torch.load"] == []


def test_save_and_load_a_model_that_lives_on_cuda(shim, tmp_path):
    model = torch.nn.Linear(3, 2).cuda()
    torch.save(model.state_dict(), tmp_path / "m.pt")
    other = torch.nn.Linear(3, 2).cuda()
    other.load_state_dict(torch.load(tmp_path / "m.pt", map_location="cuda:0"))
    assert torch.equal(other.weight, model.weight)


class Wrapper(torch.Tensor):
    """A wrapper subclass (no storage of its own, like torch_geometric's Index): torch.save
    writes it as torch._utils._rebuild_wrapper_subclass(..., device, ...)."""

    @staticmethod
    def __new__(cls, elem):
        return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype,
                                                   device=elem.device)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda t: t.elem if isinstance(t, Wrapper) else t  # noqa: E731
        return func(*torch.utils._pytree.tree_map(unwrap, args),
                    **torch.utils._pytree.tree_map(unwrap, kwargs or {}))


@pytest.mark.parametrize("map_location", [None, {"cuda:0": "cpu"}])
def test_tensor_subclasses_rebuilt_without_storage(shim, map_location):
    # torch refuses a callable map_location for them ("Callable map_location not supported with
    # _rebuild_wrapper_subclass"): the shim's own map_location must not be one.
    buf = io.BytesIO()
    torch.save(Wrapper(torch.arange(3.0, device="cuda")), buf)
    buf.seek(0)
    loaded = torch.load(buf, map_location=map_location, weights_only=False)
    assert type(loaded) is Wrapper and torch.equal(loaded.elem, torch.arange(3.0))


def test_safetensors_paths_load_as_torch_loads_them(shim, tmp_path):
    # torch.load reads a *.safetensors path with safetensors, refusing a dict or callable
    # map_location: with none given, it must see none.
    safetensors_torch = pytest.importorskip("safetensors.torch")
    path = tmp_path / "model.safetensors"
    safetensors_torch.save_file({"w": torch.arange(4.0)}, str(path))
    for map_location in (None, "cuda"):
        loaded = torch.load(path, map_location=map_location)
        assert torch.equal(loaded["w"], torch.arange(4.0))
