"""The tests that took a CUDA path, as the redirection record names them ("cuda_path_tests": device
work; "cuda_asked_tests": only asked): bracketing a test (devshim.record), merging the names of
several processes into one record, real unittest and pytest processes under the shim naming their
tests as the runner's test targets spell them (devshim/test_hooks.py, devshim/pytest_plugin.py),
and torch's own calls (an optimizer's stream query) counting for no test."""
import json
import subprocess
import sys
import textwrap

import pytest

from conftest import child_env
from devshim import record, test_hooks
from devshim.policy import Hardware

torch = pytest.importorskip("torch")
cpu_only_machine = pytest.mark.skipif(torch.cuda.is_available(), reason="CPU-only expectations")


@pytest.fixture
def fresh():
    record.reset()
    yield
    record.reset()


def test_a_test_is_named_when_a_count_grew_while_it_ran(fresh):
    record.test_started("TestA::test_redirects")
    assert record.current_test() == "TestA::test_redirects"
    record.hit("torch.zeros", "cuda", "cpu", depth=1)
    record.test_finished()
    record.test_started("TestA::test_stays_on_the_cpu")
    record.test_finished()
    record.test_started("TestA::test_again")  # an existing call site, counted again
    record.hit("torch.zeros", "cuda", "cpu", depth=1)
    record.test_finished()
    assert record.current_test() is None
    assert record.cuda_path_tests() == ["TestA::test_again", "TestA::test_redirects"]


def test_a_test_that_only_asked_is_named_apart(fresh):
    record.test_started("TestA::test_seeds")
    record.hit("torch.cuda.manual_seed_all", "cuda", "cpu", depth=1, asked=True)
    record.test_finished()
    record.test_started("TestA::test_seeds_and_places")
    record.hit("torch.cuda.manual_seed_all", "cuda", "cpu", depth=1, asked=True)
    record.hit("torch.zeros", "cuda", "cpu", depth=1)
    record.test_finished()
    record.test_started("TestA::test_on_the_cpu")  # "cpu" sent to MPS runs both ways
    record.hit("torch.zeros", "cpu", "mps", depth=1)
    record.hit("torch.ones", None, "mps", depth=1)
    record.test_finished()
    assert record.cuda_path_tests() == ["TestA::test_seeds_and_places"]
    assert record.cuda_asked_tests() == ["TestA::test_seeds"]


def test_pinned_memory_is_device_work():
    assert record.contact_of("pinned", False) == record.DEVICE_WORK
    assert record.contact_of("cuda:1", False) == record.DEVICE_WORK
    assert record.contact_of("cuda", True) == record.ASKED
    assert record.contact_of("(none)", False) == record.NO_CONTACT
    assert record.contact_of("cpu", False) == record.NO_CONTACT


def test_finished_without_a_test_names_nothing(fresh):
    record.hit("torch.zeros", "cuda", "cpu", depth=1)  # outside any test: collection, import
    record.test_finished()
    assert record.cuda_path_tests() == []


def test_write_joins_the_names_of_every_process(fresh, tmp_path):
    path = tmp_path / "record.json"
    record.test_started("test_one")
    record.hit("torch.zeros", "cuda", "cpu", depth=1)
    record.test_finished()
    assert record.write(str(path), "default", Hardware())
    record.reset()
    record.test_started("test_two")
    record.hit("torch.ones", "cuda", "cpu", depth=1)
    record.test_finished()
    assert record.write(str(path), "default", Hardware())
    record.reset()
    record.test_started("test_three")
    record.hit("torch.cuda.synchronize", "cuda", "cpu", depth=1, asked=True)
    record.test_finished()
    record.test_started("test_one")  # asked only here, device work in the first process
    record.hit("torch.cuda.synchronize", "cuda", "cpu", depth=1, asked=True)
    record.test_finished()
    assert record.write(str(path), "default", Hardware())
    written = json.loads(path.read_text())
    assert written["cuda_path_tests"] == ["test_one", "test_two"]
    assert written["cuda_asked_tests"] == ["test_three"]


def test_a_record_whose_names_are_no_strings_is_replaced(fresh, tmp_path):
    path = tmp_path / "record.json"
    path.write_text(json.dumps({"format": record.FORMAT, "redirections": [],
                                "cuda_path_tests": [1]}))
    record.test_started("test_one")
    record.hit("torch.zeros", "cuda", "cpu", depth=1)
    record.test_finished()
    assert record.write(str(path), "default", Hardware())
    assert json.loads(path.read_text())["cuda_path_tests"] == ["test_one"]


class Outer:
    class Inner:
        _testMethodName = "test_x"


def test_names_as_the_runner_spells_targets():
    assert test_hooks.unittest_name(Outer.Inner()) == "Outer::Inner::test_x"
    assert test_hooks.pytest_name("tests/test_a.py::TestC::test_y[cpu-1]") == "TestC::test_y[cpu-1]"
    assert test_hooks.pytest_name("test_a.py::test_z") == "test_z"


def run_under_shim(tmp_path, argv, asked=False):
    """argv (after the interpreter) in tmp_path under the shim, recording: the record's names of
    the tests that did device work (asked: and of those that only asked, as a second list)."""
    path = tmp_path / "record.json"
    env = child_env(activate=True)
    env["TORCHDEVICE_RECORD"] = str(path)
    done = subprocess.run([sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    written = json.loads(path.read_text())
    if asked:
        return written["cuda_path_tests"], written["cuda_asked_tests"]
    return written["cuda_path_tests"]


UNITTEST_FILE = textwrap.dedent('''
    import unittest
    import torch

    class TestDevices(unittest.TestCase):
        def setUp(self):
            self.device = "cuda" if torch.cuda.is_available() else "cpu"

        def test_on_cuda(self):
            self.assertEqual(torch.zeros(2, device=self.device).sum().item(), 0)

        def test_cpu_only(self):
            self.assertEqual(torch.ones(1).item(), 1)

        class Nested(unittest.TestCase):
            pass

    class TestModel(unittest.TestCase):
        def test_moves_a_model(self):
            torch.nn.Linear(2, 2).cuda()
''')


@cpu_only_machine
def test_unittest_names_the_tests_that_took_a_cuda_path(tmp_path):
    (tmp_path / "test_units.py").write_text(UNITTEST_FILE)
    work, asked = run_under_shim(tmp_path, ["-m", "unittest", "-v", "test_units"], asked=True)
    # setUp's is_available() call is the test's, as unittest runs it inside the test: a test
    # that placed nothing on CUDA only asked.
    assert work == ["TestDevices::test_on_cuda", "TestModel::test_moves_a_model"]
    assert asked == ["TestDevices::test_cpu_only"]


UNITTEST_TORCH_OWN = textwrap.dedent('''
    import unittest
    import torch

    class TestOwn(unittest.TestCase):
        def setUp(self):
            if torch.cuda.is_available():
                torch.cuda.manual_seed_all(0)

        def test_optimizer_step(self):
            model = torch.nn.Linear(2, 2)
            opt = torch.optim.Adam(model.parameters())
            model(torch.ones(2)).sum().backward()
            opt.step()  # asks torch.accelerator for the current stream: torch's own call

        def test_accelerator_asked(self):
            torch.accelerator.current_stream()
''')


@cpu_only_machine
def test_torchs_own_calls_count_for_no_test(tmp_path):
    (tmp_path / "test_own.py").write_text(UNITTEST_TORCH_OWN)
    work, asked = run_under_shim(tmp_path, ["-m", "unittest", "-v", "test_own"], asked=True)
    assert work == []
    assert asked == ["TestOwn::test_accelerator_asked", "TestOwn::test_optimizer_step"]
    rows = json.loads((tmp_path / "record.json").read_text())["redirections"]
    step_line = UNITTEST_TORCH_OWN.splitlines().index(
        "        opt.step()  # asks torch.accelerator for the current stream: torch's own call") + 1
    # Nothing is recorded at the line of opt.step(): neither torch.accelerator's query nor the
    # torch.cuda one devshim forwards it to.
    assert [r for r in rows if r["call_site"]["line"] == step_line] == []
    assert {r["api"] for r in rows} >= {"torch.cuda.is_available", "torch.cuda.manual_seed_all",
                                        "torch.accelerator.current_stream"}


UNITTEST_QUIET_SETUP = textwrap.dedent('''
    import unittest
    import torch

    DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

    class TestDevices(unittest.TestCase):
        def test_on_cuda(self):
            self.assertEqual(torch.zeros(2, device=DEVICE).sum().item(), 0)

        def test_cpu_only(self):
            self.assertEqual(torch.ones(1).item(), 1)
''')


@cpu_only_machine
def test_a_module_level_choice_is_not_a_test_of_its_own(tmp_path):
    (tmp_path / "test_quiet.py").write_text(UNITTEST_QUIET_SETUP)
    names = run_under_shim(tmp_path, ["-m", "unittest", "test_quiet"])
    assert names == ["TestDevices::test_on_cuda"]


PYTEST_FILE = textwrap.dedent('''
    import unittest
    import pytest
    import torch

    DEVICES = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])

    @pytest.fixture
    def model():
        return torch.nn.Linear(2, 2).to("cuda" if torch.cuda.is_available() else "cpu")

    @pytest.fixture
    def cleanup():
        yield
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # a teardown's: not the test's path

    @pytest.mark.parametrize("n", [1, 2])
    def test_picks_cuda(n):
        assert torch.zeros(n, device="cuda" if torch.cuda.is_available() else "cpu").numel() == n

    def test_fixture_built_on_cuda(model):
        assert model(torch.ones(2)).shape == (2,)

    def test_cpu_only(cleanup):
        assert torch.ones(1).item() == 1

    @pytest.mark.parametrize("device", DEVICES, ids=str)
    def test_devices(device):
        assert torch.ones(1, device=device).item() == 1

    class TestStyle(unittest.TestCase):
        def test_moves(self):
            torch.ones(1).cuda()
''')


@cpu_only_machine
def test_the_pytest_plugin_names_setup_and_call_not_teardown(tmp_path):
    (tmp_path / "test_plugin.py").write_text(PYTEST_FILE)
    names = run_under_shim(tmp_path, ["-m", "pytest", "-q", "-p", "devshim.pytest_plugin",
                                      "-p", "no:cacheprovider", "test_plugin.py"])
    # test_devices' cases are CPU device objects by the time they run: no request is rewritten.
    assert names == ["TestStyle::test_moves", "test_fixture_built_on_cuda", "test_picks_cuda[1]",
                     "test_picks_cuda[2]"]
