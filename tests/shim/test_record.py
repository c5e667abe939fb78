"""The redirection record: counting per call site, merging, the JSON file written at exit by real
processes (two of them sharing one file), and a broken file being replaced."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import SHIM_DIR
from devshim import record
from devshim.policy import Hardware

ENTRY_KEYS = {"api", "requested", "used", "count", "call_site"}


def entry(api="torch.zeros", requested="cuda", used="cpu", count=1, file="/a.py", line=3,
          function="f"):
    return {"api": api, "requested": requested, "used": used, "count": count,
            "call_site": {"file": file, "line": line, "function": function}}


@pytest.fixture
def fresh():
    record.reset()
    yield
    record.reset()


def call_twice():
    for _ in range(2):
        record.hit("torch.zeros", "cuda", "cpu", depth=1)  # the call site is this line


def test_hits_are_counted_per_call_site(fresh):
    call_twice()
    call_twice()
    record.hit("torch.zeros", "cuda", "cpu", depth=1)
    record.hit("torch.zeros", "cuda:1", "cpu", depth=1)
    rows = record.rows()
    assert [(r["requested"], r["count"]) for r in rows] == [("cuda", 4), ("cuda", 1), ("cuda:1", 1)]
    assert rows[0]["call_site"]["function"] == "call_twice"
    assert rows[0]["call_site"]["file"] == os.path.abspath(__file__)
    assert all(set(r) == ENTRY_KEYS for r in rows)


def test_requested_is_written_as_a_device_string(fresh):
    torch = pytest.importorskip("torch")
    record.hit("torch.zeros", torch.device("cuda", 1), "cpu", depth=1)
    record.hit("torch.zeros", None, "mps", depth=1)
    record.hit("torch.Tensor.to", 0, "cpu", depth=1)
    assert {r["requested"] for r in record.rows()} == {"cuda:1", "(none)", "cuda:0"}


def test_a_forked_child_starts_from_zero(fresh):
    record.hit("torch.zeros", "cuda", "cpu", depth=1)
    record._after_fork()
    assert record.rows() == []
    record.hit("torch.zeros", "cuda", "cpu", depth=1)
    assert [r["count"] for r in record.rows()] == [1]


def test_merge_sums_counts_and_keeps_the_first_call_site():
    merged = record.merge([entry(count=2, function="first"), entry(api="torch.ones")],
                          [entry(count=3, function="second"), entry(line=9)])
    assert [(e["api"], e["call_site"]["line"], e["count"], e["call_site"]["function"])
            for e in merged] == [("torch.ones", 3, 1, "f"), ("torch.zeros", 3, 5, "first"),
                                 ("torch.zeros", 9, 1, "f")]


def test_document_format():
    doc = record.document([entry()], "default", Hardware(), pid=1234)
    assert doc == {"format": "devshim-redirections/1", "shim": "python", "pid": 1234,
                   "policy": "default",
                   "hardware": {"accelerator": None, "mps": False, "cuda_device_count": 0},
                   "redirections": [entry()], "cuda_path_tests": [], "cuda_asked_tests": []}
    assert record.document([], "default", Hardware(mps=True))["hardware"]["accelerator"] == "mps"


@pytest.mark.parametrize("existing", ["{not json", '{"format": "other/1", "redirections": []}',
                                      '{"format": "devshim-redirections/1", "redirections": [{}]}'])
def test_write_replaces_a_broken_file(fresh, tmp_path, existing):
    path = tmp_path / "sub" / "record.json"
    path.parent.mkdir()
    path.write_text(existing)
    record.hit("torch.zeros", "cuda", "cpu", depth=1)
    assert record.write(str(path), "default", Hardware())
    doc = json.loads(path.read_text())
    assert doc["format"] == "devshim-redirections/1"
    assert [e["count"] for e in doc["redirections"]] == [1]
    assert sorted(os.listdir(path.parent)) == ["record.json", "record.json.lock"]


def test_write_merges_with_what_is_there_and_never_raises(fresh, tmp_path):
    path = tmp_path / "record.json"
    record.hit("torch.zeros", "cuda", "cpu", depth=1)
    assert record.write(str(path), "default", Hardware())
    assert record.write(str(path), "default", Hardware())
    assert [e["count"] for e in json.loads(path.read_text())["redirections"]] == [2]
    bad_path = tmp_path / "no-such-dir-file" / "x" / "\0bad"
    assert record.write(str(bad_path), "default", Hardware()) is False


def shim_env(**extra):
    """This process's environment without devshim settings, the shim activated, plus extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TORCHDEVICE_") and k not in ("TORCH_ALLOW_REDIRECTS",)}
    env.update({"PYTHONPATH": str(SHIM_DIR), "ACTIVATE_TORCH_DEVICE": "1", **extra})
    return env


PROGRAM = textwrap.dedent('''
    import torch

    def work():
        for _ in range(3):
            torch.zeros(2, device="cuda")
        torch.ones(1).cuda()

    work()
''')


@pytest.mark.skipif(pytest.importorskip("torch").cuda.is_available(),
                    reason="CPU-only expectations")
def test_two_processes_write_one_record(tmp_path):
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    path = tmp_path / "record.json"
    path.write_text("garbage from an earlier crash")
    env = shim_env(TORCHDEVICE_RECORD=str(path))
    procs = [subprocess.Popen([sys.executable, str(program)], env=env, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    doc = json.loads(path.read_text())
    assert set(doc) == {"format", "shim", "pid", "policy", "hardware", "redirections",
                        "cuda_path_tests", "cuda_asked_tests"}
    assert ((doc["format"], doc["shim"], doc["policy"])
            == ("devshim-redirections/1", "python", "default"))
    assert doc["hardware"] == {"accelerator": None, "mps": False, "cuda_device_count": 0}
    assert doc["pid"] in {p.pid for p in procs}
    rows = {(e["api"], e["requested"], e["used"]): e for e in doc["redirections"]}
    assert set(rows) == {("torch.zeros", "cuda", "cpu"), ("torch.Tensor.cuda", "cuda", "cpu")}
    zeros = rows[("torch.zeros", "cuda", "cpu")]
    assert zeros["count"] == 6
    assert zeros["call_site"] == {"file": str(program), "line": 6, "function": "work"}
    assert rows[("torch.Tensor.cuda", "cuda", "cpu")]["count"] == 2
    assert rows[("torch.Tensor.cuda", "cuda", "cpu")]["call_site"]["line"] == 7


FORKED = textwrap.dedent('''
    import atexit, os, sys
    import torch
    import devshim.patches

    torch.zeros(1, device="cuda")  # the parent's call: not the child's to record
    pid = os.fork()
    if pid == 0:  # as the runner's warm start (devshim_zygote.py) makes a child
        os.environ["TORCHDEVICE_RECORD"] = sys.argv[1]
        devshim.patches.refresh_from_environ()
        torch.ones(2, device="cuda")
        atexit._run_exitfuncs()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))
''')


@pytest.mark.skipif(pytest.importorskip("torch").cuda.is_available(),
                    reason="CPU-only expectations")
def test_a_forked_child_records_its_own_calls_where_its_environment_says(tmp_path):
    program = tmp_path / "forked.py"
    program.write_text(FORKED)
    path = tmp_path / "child.json"
    env = shim_env()
    done = subprocess.run([sys.executable, str(program), str(path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(path.read_text())
    assert [(e["api"], e["count"]) for e in doc["redirections"]] == [("torch.ones", 1)]
