"""The conformance check of the shim against torch's machinery (devshim/conformance.py, ``python
-m devshim conformance``; the whole check is ctest's shim_conformance): its rules on made-up
outcomes, so that each is seen to fail, and one real run on a few APIs."""
import json
import subprocess
import sys

import pytest

from conftest import child_env

torch = pytest.importorskip("torch")
from devshim import conformance  # noqa: E402

OK = ["ok", ["tensor", [2], "torch.float32", "cpu", [1.0, 1.0]]]
OTHER = ["ok", ["tensor", [2], "torch.float32", "cpu", [2.0, 2.0]]]
REFUSED = ["error", "RuntimeError", "refused"]


def outcomes(**changed):
    result = {m: OK for m in conformance.MACHINERY}
    result.update(changed)
    return result


def runs(plain_results, shimmed_results, missing=()):
    return ({"results": plain_results, "missing": []},
            {"results": shimmed_results, "missing": list(missing)})


def test_the_same_outcomes_everywhere_conform():
    both = {"torch.zeros": {"cuda": outcomes(), "cpu": outcomes()}}
    assert conformance.compare(*runs(both, both)) == ([], [])


def test_torchscript_rejecting_a_masquerade_call_only_with_the_shim_is_a_problem():
    plain = {"torch.cuda.device_count": {"cuda": outcomes()}}
    shimmed = {"torch.cuda.device_count": {"cuda": outcomes(script=REFUSED)}}
    problems, _ = conformance.compare(*runs(plain, shimmed))
    assert problems == ["torch.cuda.device_count [cuda] under script: RuntimeError: refused; "
                        'expected ok ["tensor", [2], "torch.float32", "cpu", [1.0, 1.0]] '
                        "(TorchScript as without devshim)"]


def test_a_cuda_form_scripted_must_do_what_the_cpu_form_does_without_the_shim():
    # Before devices written in scripted code were rewritten, TorchScript ran "cuda" as written.
    plain = {"torch.zeros": {"cuda": outcomes(script=REFUSED), "cpu": outcomes()}}
    shimmed = {"torch.zeros": {"cuda": outcomes(script=REFUSED), "cpu": outcomes()}}
    problems, _ = conformance.compare(*runs(plain, shimmed))
    assert len(problems) == 1 and "[cuda] under script" in problems[0]
    assert "the cpu form without devshim" in problems[0]


def test_a_cuda_form_must_do_under_each_machinery_what_the_cpu_form_does_without_the_shim():
    plain = {"torch.zeros": {"cuda": outcomes(eager=REFUSED), "cpu": outcomes()}}
    shimmed = {"torch.zeros": {"cuda": outcomes(compile=OTHER), "cpu": outcomes()}}
    problems, _ = conformance.compare(*runs(plain, shimmed))
    assert len(problems) == 1 and "[cuda] under compile" in problems[0]
    assert "the cpu form without devshim" in problems[0]


def test_a_masquerade_call_must_give_its_eager_result_unless_refused_without_the_shim_too():
    plain = {"torch.cuda.device_count": {"cuda": outcomes(eager=REFUSED, fx=REFUSED)}}
    shimmed = {"torch.cuda.device_count": {"cuda": outcomes(fx=REFUSED, compile=REFUSED)}}
    problems, _ = conformance.compare(*runs(plain, shimmed))
    assert len(problems) == 1 and "under compile" in problems[0]


def test_missing_samples_broken_samples_and_stale_known_limitations_are_problems(monkeypatch):
    monkeypatch.setattr(conformance, "KNOWN", {("torch.ones", "fx"): "was refused once"})
    both = {"torch.ones": {"cuda": outcomes(), "cpu": outcomes()},
            "torch.zeros": {"cuda": outcomes(eager=REFUSED)}}
    problems, known = conformance.compare(*runs(both, both, missing=["torch.new_factory"]))
    assert known == []
    assert [p.split(":")[0] for p in problems] == [
        "torch.new_factory", "torch.zeros [cuda]", "torch.ones under fx"]


def test_a_known_limitation_is_listed_apart(monkeypatch):
    monkeypatch.setattr(conformance, "KNOWN", {("torch.ones", "fx"): "fx cannot"})
    plain = {"torch.ones": {"cuda": outcomes(), "cpu": outcomes()}}
    shimmed = {"torch.ones": {"cuda": outcomes(fx=OTHER), "cpu": outcomes()}}
    assert conformance.compare(*runs(plain, shimmed)) == (
        [], ["torch.ones [cuda] under fx: fx cannot"])


def test_every_patched_api_has_a_sample_or_a_reason():
    from devshim import patches

    samples, missing = conformance.samples_for(torch, patches.plan(torch))
    assert missing == []
    assert {"torch.zeros", "torch.Tensor.to", "torch.cuda.is_available"} <= set(samples)


def test_a_real_run_on_a_few_apis(tmp_path):
    env = child_env()
    env["TMPDIR"] = str(tmp_path)
    apis = ("torch.zeros_like", "torch.Tensor.to", "torch.cuda.is_available", "torch.device")
    done = subprocess.run([sys.executable, "-m", "devshim", "conformance", "--json",
                           *[a for api in apis for a in ("--api", api)]], env=env,
                          capture_output=True, text=True, timeout=600)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["problems"] == [], report["problems"]
    assert set(report["shimmed"]["results"]) == set(apis)
    zeros = report["shimmed"]["results"]["torch.zeros_like"]
    assert zeros["cpu"]["script"][0] == "ok" and zeros["cuda"]["compile"][0] == "ok"
    # A device written inside scripted code is rewritten when TorchScript compiles it.
    assert zeros["cuda"]["script"] == report["plain"]["results"]["torch.zeros_like"]["cpu"][
        "script"]
    # The children's scratch files go with the run, crashed children's included (torch's own
    # compile caches stay).
    assert list(tmp_path.glob("devshim-conformance-*")) == []
