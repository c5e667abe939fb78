"""Settings from the environment, and the log: INFO prints one line per new call site."""
import logging

import pytest

from devshim import config

torch = pytest.importorskip("torch")
from conftest import cpu_only  # noqa: E402


def test_defaults():
    c = config.from_environ({})
    assert (c.allow_redirects, c.log_level, c.log_level_given, c.policy, c.record_path,
            c.problems) == (False, "WARNING", False, "default", None, ())


def test_values(tmp_path):
    c = config.from_environ({"TORCH_ALLOW_REDIRECTS": " True ", "TORCHDEVICE_LOG_LEVEL": "debug",
                             "TORCHDEVICE_POLICY": "accelerator-only",
                             "TORCHDEVICE_RECORD": "rec.json"})
    assert c.allow_redirects and c.log_level == "DEBUG" and c.log_level_given
    assert c.policy == "accelerator-only"
    assert c.record_path.endswith("rec.json") and c.record_path.startswith("/")


@pytest.mark.parametrize("value", ["", "0", "false", "no", "maybe"])
def test_allow_redirects_is_off_unless_truthy(value):
    assert not config.from_environ({"TORCH_ALLOW_REDIRECTS": value}).allow_redirects


def test_bad_values_fall_back_and_are_reported():
    c = config.from_environ({"TORCHDEVICE_LOG_LEVEL": "LOUD", "TORCHDEVICE_POLICY": "sometimes"})
    assert (c.log_level, c.log_level_given, c.policy) == ("WARNING", False, "default")
    assert len(c.problems) == 2 and "LOUD" in c.problems[0] and "sometimes" in c.problems[1]


@pytest.mark.skipif(not cpu_only(torch), reason="expectations are for a CPU-only machine")
def test_info_prints_one_line_per_new_call_site(clean_env, shim, capsys):
    clean_env.setenv("TORCHDEVICE_LOG_LEVEL", "INFO")
    shim.deactivate()
    shim.activate()
    capsys.readouterr()
    for _ in range(5):
        torch.zeros(1, device="cuda")
    torch.zeros(1, device="cuda")
    torch.zeros(1, device="cpu")  # not redirected on a CPU-only machine: no line
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("devshim")]
    assert len(lines) == 2, lines
    assert all(line.startswith("devshim INFO: torch.zeros: cuda -> cpu at ") for line in lines)
    assert __file__ in lines[0] and "(test_info_prints_one_line_per_new_call_site)" in lines[0]
    assert logging.getLogger("devshim").level == logging.INFO


@pytest.mark.skipif(not cpu_only(torch), reason="expectations are for a CPU-only machine")
def test_warning_level_is_quiet(shim, capsys):
    torch.zeros(1, device="cuda")
    assert "devshim" not in capsys.readouterr().err


@pytest.mark.skipif(not cpu_only(torch), reason="expectations are for a CPU-only machine")
def test_a_bad_setting_is_logged_as_an_error(clean_env, shim, caplog):
    clean_env.setenv("TORCHDEVICE_POLICY", "sometimes")
    shim.deactivate()
    with caplog.at_level(logging.ERROR, logger="devshim"):
        shim.activate()
    assert "TORCHDEVICE_POLICY='sometimes'" in caplog.text
    assert shim.status()["policy"] == "default"
