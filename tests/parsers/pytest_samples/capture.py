#!/usr/bin/env python3
"""Regenerate the pytest samples of tests/parsers/pytest_{junit,text}_test.cpp: real output of
real pytest runs, each made with the runner's former command line (-rA; now -ra)

    <python> -m pytest -v -rA --junitxml=<name>.xml -o junit_family=xunit1 -p no:cacheprovider
        [extra args] tests/<file>.py

in a scratch project (/tmp/devshim-pytest-samples/proj, so that the paths in the logs stay the
same from one capture to the next), stdout and stderr merged into <name>.log. The runner gives -ra
now (tests/parsers/fixtures/pytest holds such logs); these keep -rA's PASSES section and PASSED
lines, which older runs' logs hold, and a suite's own `args` may ask for. The test modules are
below, in SOURCES. Usage:

    python3 tests/parsers/pytest_samples/capture.py /path/to/python   # with pytest installed

The samples in this folder were made with Python 3.11.7 and pytest 9.2.0.
"""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJ = Path("/tmp/devshim-pytest-samples/proj")

SOURCES = {
    "test_outcomes.py": '''\
import sys
import unittest

import pytest


def test_pass():
    assert 1 + 1 == 2


def test_fail():
    x = 0.79
    assert x <= 1e-05, f"{x} not less than or equal to 1e-05"


def helper(v):
    raise ValueError(f"bad value {v}")


def test_fail_deep():
    helper(3)


def test_skip_inline():
    pytest.skip("not on this box")


@pytest.mark.skip(reason="decorated skip")
def test_skip_decorated():
    pass


@pytest.mark.skipif(sys.platform.startswith("linux"), reason="skipif linux")
def test_skipif():
    pass


@pytest.mark.xfail(reason="known bug 12")
def test_xfail():
    assert False


def test_xfail_inline():
    pytest.xfail("inline xfail reason")


@pytest.mark.xfail(reason="maybe fixed")
def test_xpass():
    pass


@pytest.mark.xfail(reason="strictly broken", strict=True)
def test_xpass_strict():
    pass


def test_prints():
    print("hello from the test")
    print("second line", file=sys.stderr)


@pytest.fixture
def bad_setup():
    raise RuntimeError("setup exploded")


@pytest.fixture
def bad_teardown():
    yield 1
    raise RuntimeError("teardown exploded")


def test_setup_error(bad_setup):
    pass


def test_teardown_error(bad_teardown):
    assert bad_teardown == 1


def test_fail_and_teardown_error(bad_teardown):
    assert bad_teardown == 2


@pytest.mark.parametrize(
    "v", [1, 2, "a::b", "sp ace", "\\u00fcn\\u00ef", "[x]", "a-1", "a - b", "x PASSED [ 5%]",
          pytest.param("open", id="a[")])
def test_param(v):
    assert v not in (2, "a - b")


class TestGroup:
    def test_method_pass(self):
        pass

    def test_method_fail(self):
        assert [1, 2] == [1, 3]

    @pytest.mark.parametrize("n", [0, 1])
    def test_method_param(self, n):
        assert n == 0

    class TestInner:
        def test_nested(self):
            pass


class UTest(unittest.TestCase):
    def test_ut_pass(self):
        pass

    def test_ut_fail(self):
        self.assertEqual(1, 2)

    @unittest.skip("ut skip")
    def test_ut_skip(self):
        pass

    @unittest.expectedFailure
    def test_ut_expected_failure(self):
        self.assertEqual(1, 0)
''',
    "test_details.py": '''\
import sys

import pytest


class MyError(Exception):
    pass


def test_custom_exc():
    raise MyError("custom thing happened at 0x7ffe1234")


def test_long_skip():
    pytest.skip("this is a very long skip reason that goes on and on and on beyond the width of "
                "the terminal for sure, yes")


@pytest.mark.xfail(reason="a very long xfail reason that goes on and on and on beyond the width "
                   "of the terminal for sure, yes")
def test_long_xfail():
    assert 0


@pytest.mark.parametrize("v", ["a very long parameter id that is longer than the terminal width "
                               "for sure and then some more text"])
def test_long_id(v):
    print("out", v[:3])


def test_prints():
    print("hello from the test")
    print("second line", file=sys.stderr)


def test_prints_nonl():
    sys.stdout.write("no newline here")
    sys.stdout.flush()


def test_prints_then_fails():
    print("about to fail")
    assert "needle" in "haystack"


def test_multiline_msg():
    raise RuntimeError("first line\\nsecond line\\nthird")


def test_import_in_test():
    import torch_not_here  # noqa: F401
''',
    "test_chain.py": '''\
def inner():
    raise KeyError("k")


def test_chain():
    try:
        inner()
    except KeyError as e:
        raise RuntimeError("wrapped failure") from e


def test_assert_plain():
    assert 1 == 2


def test_ok():
    pass
''',
    "test_collect_error.py": '''\
import nonexistent_module_xyz  # noqa: F401


def test_never():
    pass
''',
    "test_collect_syntax.py": '''\
def f(:
    pass
''',
    "test_module_skip.py": '''\
import pytest

pytest.skip("whole module skipped", allow_module_level=True)


def test_a():
    pass
''',
    "test_module_teardown.py": '''\
import warnings

import pytest


def test_w():
    warnings.warn("old api", DeprecationWarning)


@pytest.fixture(scope="module")
def modfix():
    yield 1
    raise RuntimeError("module teardown broke")


def test_m1(modfix):
    pass


def test_m2(modfix):
    pass
''',
    "test_empty.py": '''\
X = 1
''',
    "test_subtests.py": '''\
import unittest


class T(unittest.TestCase):
    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 1)

    def test_sub_ok(self):
        for i in range(2):
            with self.subTest(i=i):
                pass


def test_pt_sub(subtests):
    for i in range(3):
        with subtests.test(msg="chk", i=i):
            assert i != 1
''',
    "test_crash.py": '''\
import ctypes


def test_ok():
    pass


def test_segv():
    print("about to crash")
    ctypes.string_at(0)


def test_after():
    pass
''',
    "test_hang.py": '''\
import time


def test_ok():
    pass


def test_hang():
    print("hanging")
    time.sleep(100)


def test_after():
    pass
''',
}

# (sample name, module, extra args, signal to send after 3 s or None)
RUNS = [
    ("outcomes", "test_outcomes.py", [], None),
    ("details", "test_details.py", [], None),
    ("details_s", "test_details.py", ["-s"], None),
    ("tb_short", "test_chain.py", ["--tb=short"], None),
    ("tb_native", "test_chain.py", ["--tb=native"], None),
    ("tb_no", "test_outcomes.py", ["--tb=no"], None),
    ("quiet", "test_outcomes.py", ["-q"], None),
    ("collect_error", "test_collect_error.py", [], None),
    ("collect_syntax", "test_collect_syntax.py", [], None),
    ("module_skip", "test_module_skip.py", [], None),
    ("module_teardown", "test_module_teardown.py", [], None),
    ("empty", "test_empty.py", [], None),
    ("subtests", "test_subtests.py", [], None),
    ("crash", "test_crash.py", [], None),
    ("timeout_term", "test_hang.py", [], signal.SIGTERM),
    ("timeout_int", "test_hang.py", [], signal.SIGINT),
]


def main():
    python = sys.argv[1] if len(sys.argv) > 1 else sys.executable
    shutil.rmtree(PROJ, ignore_errors=True)
    (PROJ / "tests").mkdir(parents=True)
    (PROJ / "pytest.ini").write_text("[pytest]\n")
    (PROJ / "tests" / "__init__.py").write_text("")
    for name, text in SOURCES.items():
        (PROJ / "tests" / name).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "PYTEST_ADDOPTS", "PY_COLORS", "NO_COLOR",
                        "FORCE_COLOR", "TERM", "PYTHONPATH", "CI")}
    # The runner's environment (PYTHONUNBUFFERED, PYTHONFAULTHANDLER), made deterministic.
    env.update({"PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1", "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"})
    for sample, module, extra, sig in RUNS:
        xml = HERE / f"{sample}.xml"
        log = HERE / f"{sample}.log"
        xml.unlink(missing_ok=True)
        argv = [python, "-m", "pytest", "-v", "-rA", f"--junitxml={xml}", "-o",
                "junit_family=xunit1", "-p", "no:cacheprovider", *extra, f"tests/{module}"]
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, cwd=PROJ, env=env, stdout=out, stderr=subprocess.STDOUT)
            if sig is not None:
                time.sleep(3)
                proc.send_signal(sig)
            rc = proc.wait()
        print(f"{sample}: exit {rc}, xml {'yes' if xml.exists() else 'no'}")


if __name__ == "__main__":
    main()
