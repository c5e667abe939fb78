"""The redirection policy, cell by cell, against the shared test vectors (shim/vectors)."""
import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "shim" / "python"))

from devshim.policy import Hardware, parse_device, resolve  # noqa: E402

VECTORS = json.loads((ROOT / "shim" / "vectors" / "redirection.json").read_text())["vectors"]


def vector_id(v):
    return f"{v['request']}-{v['hardware_name']}-override{int(v['override'])}-{v['policy']}"


@pytest.mark.parametrize("v", VECTORS, ids=[vector_id(v) for v in VECTORS])
def test_every_vector(v):
    hw = Hardware(mps=v["hardware"]["mps"], cuda_device_count=v["hardware"]["cuda_device_count"])
    d = resolve(v["request"], hw, override=v["override"], policy=v["policy"])
    assert d.device_str == v["expected"]["device"]
    assert d.override == v["expected"]["override"]
    assert d.reason


def test_vectors_cover_every_cell_of_the_table():
    requests = {(v["request"] or "none").split(":")[0] for v in VECTORS}
    assert {"none", "cpu", "mps", "cuda", "meta"} <= requests
    assert {v["hardware_name"] for v in VECTORS} >= {"mps", "cuda2", "none"}
    assert any(v["request"] == "cpu:-1" for v in VECTORS)
    assert {v["policy"] for v in VECTORS} == {"default", "accelerator-only"}


class FakeDevice:
    def __init__(self, type, index):
        self.type, self.index = type, index


def test_requests_as_strings_tuples_ordinals_and_device_objects_agree():
    hw = Hardware(cuda_device_count=2)
    for spec in ("cuda:1", ("cuda", 1), 1, FakeDevice("cuda", 1)):
        assert resolve(spec, hw).device_str == "cuda:1"
    assert parse_device(" mps ") == ("mps", None)
    with pytest.raises(ValueError):
        parse_device("cuda:x")
    with pytest.raises(ValueError):
        resolve("cpu", hw, policy="sometimes")


def test_the_override_is_state_the_caller_keeps():
    hw = Hardware(mps=True)
    d = resolve("cpu:-1", hw)
    assert d.override and d.device_str == "cpu"
    assert resolve("cpu", hw, override=d.override).device_str == "cpu"
    off = resolve("cpu:-1", hw, override=True)
    assert not off.override
    assert resolve("cpu", hw, override=off.override).device_str == "mps"
