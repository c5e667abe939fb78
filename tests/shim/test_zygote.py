"""The warm-start server, runner/engine/zygote/devshim_zygote.py, on its own: its protocol (the
ready line, one reply per request, bad requests answered and survived, EOF ends it), the exit
codes of the children it forks, and the pytest configuration template it builds from pytest's
internals (`_pytest.config.get_config`, `Config.InvocationParams`, `_get_prog_name`), which a
pytest release may change: these tests fail then, not every warm run by a timeout.

The server re-parents each child to its own parent, which must be a child subreaper (the runner
is one): a driver process (`DRIVER` below) plays the runner, so that this test process stays as
it is.
"""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO_ROOT

ZYGOTE = REPO_ROOT / "runner" / "engine" / "zygote" / "devshim_zygote.py"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the server's children need a Linux child subreaper")

# The runner's part: a child subreaper that starts the server, sends each request, waits for each
# child it forked and reports {"ready": ..., "replies": [...], "exits": [...], "zygote_exit": N}.
DRIVER = textwrap.dedent('''
    import ctypes, json, os, subprocess, sys
    PR_SET_CHILD_SUBREAPER = 36
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    zygote, preload, requests = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    server = subprocess.Popen([sys.executable, zygote, "--preload", preload],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    out = {"ready": json.loads(server.stdout.readline()), "replies": [], "exits": []}
    if out["ready"].get("ready"):
        for request in requests:
            line = request if isinstance(request, str) else json.dumps(request)
            server.stdin.write(line + "\\n")
            server.stdin.flush()
            reply = json.loads(server.stdout.readline())
            out["replies"].append(reply)
            if "pid" in reply:
                _, status = os.waitpid(reply["pid"], 0)
                out["exits"].append(os.waitstatus_to_exitcode(status))
            else:
                out["exits"].append(None)
    server.stdin.close()
    out["zygote_exit"] = server.wait(timeout=60)
    print(json.dumps(out))
''')


def serve(tmp_path, requests, preload="pytest"):
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    done = subprocess.run([sys.executable, str(driver), str(ZYGOTE), preload, json.dumps(requests)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def request(tmp_path, argv, log):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return {"argv": argv, "cwd": str(tmp_path), "env": env, "log": str(tmp_path / log)}


@linux_only
def test_ready_line_names_the_preloads_it_could_import(tmp_path):
    out = serve(tmp_path, [], preload="?json,?devshim_no_such_module,pytest")
    assert out["ready"]["ready"] is True
    assert out["ready"]["preloaded"] == ["json", "pytest"]
    assert out["zygote_exit"] == 0


@linux_only
def test_a_required_preload_that_fails_is_said_and_exits_3(tmp_path):
    out = serve(tmp_path, [], preload="devshim_no_such_module")
    assert out["ready"]["ready"] is False
    assert "devshim_no_such_module" in out["ready"]["error"]
    assert out["zygote_exit"] == 3


@linux_only
def test_children_leave_with_the_exit_codes_a_cold_process_would(tmp_path):
    (tmp_path / "test_pass.py").write_text("def test_ok():\n    assert True\n")
    (tmp_path / "test_fail.py").write_text("def test_no():\n    assert False\n")
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n")
    (tmp_path / "raises.py").write_text("raise RuntimeError('from the module')\n")
    out = serve(tmp_path, [
        request(tmp_path, ["-m", "pytest", "-p", "no:cacheprovider", "test_pass.py"], "a.log"),
        request(tmp_path, ["-m", "pytest", "-p", "no:cacheprovider", "test_fail.py"], "b.log"),
        request(tmp_path, ["-m", "pytest", "--devshim-no-such-option", "test_pass.py"], "c.log"),
        request(tmp_path, ["-m", "exits"], "d.log"),
        request(tmp_path, ["-m", "raises"], "e.log"),
    ])
    assert out["exits"] == [0, 1, 4, 3, 1], out
    assert "1 passed" in (tmp_path / "a.log").read_text()
    assert "1 failed" in (tmp_path / "b.log").read_text()
    assert "RuntimeError: from the module" in (tmp_path / "e.log").read_text()
    assert out["zygote_exit"] == 0


@linux_only
def test_each_plugin_list_gets_its_own_configuration(tmp_path):
    # The template is built per `-p` list: a file run with the cache plugin writes its cache,
    # one run with `-p no:cacheprovider` does not, whichever came first.
    (tmp_path / "sub_a").mkdir()
    (tmp_path / "sub_b").mkdir()
    for sub in ("sub_a", "sub_b"):
        (tmp_path / sub / "test_x.py").write_text("def test_ok():\n    assert True\n")
    out = serve(tmp_path, [
        request(tmp_path, ["-m", "pytest", "-p", "no:cacheprovider", "--rootdir", "sub_a",
                           "sub_a/test_x.py"], "a.log"),
        request(tmp_path, ["-m", "pytest", "--rootdir", "sub_b", "sub_b/test_x.py"], "b.log"),
        request(tmp_path, ["-m", "pytest", "-p", "no:cacheprovider", "--rootdir", "sub_a",
                           "sub_a/test_x.py"], "c.log"),
    ])
    assert out["exits"] == [0, 0, 0], out
    assert not (tmp_path / "sub_a" / ".pytest_cache").exists()
    assert (tmp_path / "sub_b" / ".pytest_cache").exists()


@linux_only
def test_bad_requests_are_answered_and_the_server_goes_on(tmp_path):
    (tmp_path / "test_pass.py").write_text("def test_ok():\n    assert True\n")
    out = serve(tmp_path, [
        "not json",
        {"argv": ["test_pass.py"], "cwd": str(tmp_path), "env": {}, "log": "x.log"},
        {"cwd": str(tmp_path)},
        request(tmp_path, ["-m", "pytest", "-p", "no:cacheprovider", "test_pass.py"], "a.log"),
    ])
    errors = [r.get("error", "") for r in out["replies"][:3]]
    assert errors[0].startswith("JSONDecodeError")
    assert errors[1] == "only `python -m MODULE ...` commands start warm"
    assert errors[2] == "only `python -m MODULE ...` commands start warm"
    assert out["exits"] == [None, None, None, 0]
    assert out["zygote_exit"] == 0


def load_zygote():
    spec = importlib.util.spec_from_file_location("devshim_zygote_under_test", ZYGOTE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_plugin_arguments_are_read_as_pytest_reads_them():
    zygote = load_zygote()
    assert zygote.plugin_args(["-p", "no:cacheprovider", "-pxdist", "-v", "-p"]) == (
        "no:cacheprovider", "xdist", "")
    assert zygote.plugin_args(["-v", "tests"]) == ()


def test_the_configuration_template_works_with_this_pytest(monkeypatch):
    """What PytestTemplate takes from pytest's internals, on the pinned pytest: get_config with
    `prog`, the program name `python -m pytest` gives, Config.InvocationParams; and the child's
    get_config call answered by the template once, then pytest's own again."""
    import _pytest.config

    zygote = load_zygote()
    assert zygote.PytestTemplate.prog(), "_pytest.config._get_prog_name is gone"
    args = ["-p", "no:cacheprovider", "test_x.py"]
    config = zygote.PytestTemplate().build(args)
    assert isinstance(config, _pytest.config.Config), "get_config(args, None, prog=...) failed"
    monkeypatch.setattr(_pytest.config, "get_config", _pytest.config.get_config)
    original = _pytest.config.get_config
    zygote.PytestTemplate.use(config)
    child_args = ["-p", "no:cacheprovider", "-v", "test_y.py"]
    got = _pytest.config.get_config(child_args, None, prog=zygote.PytestTemplate.prog())
    assert got is config
    assert list(got.invocation_params.args) == child_args
    assert _pytest.config.get_config is original, "used once, then pytest's own"
