"""The runner's pytest command on one test file of many tests: what a user waits for, end to end,
against pytest alone, and the ``-rA`` the runner gave before against its ``-ra``.

pytest's ``-rA`` adds the passes to its terminal summary; for each passed report it rescans every
report of the session (``_pytest.terminal.TerminalReporter._get_teardown_reports``), a cost
quadratic in the file's tests that comes after its last test and before pytest exits. peft's
``tests/test_custom_models.py`` (18,413 tests) spent ~25 of its 36 minutes there (9.3 with
``-ra``), and under the shim it passed its 2,400 s timeout (14.6 minutes with ``-ra``). The
runner now gives ``-ra``: every outcome but the passes, which it reads from the progress lines
and the JUnit XML (runner/engine/frameworks/pytest.cpp).

For a generated file of N passing tests (``@pytest.mark.parametrize`` over ``range(N)``, each
printing one line), at N, 10 N and 100 N (``--tests``, default 500):

- ``pytest -ra``: the runner's pytest command line run directly (cwd = the project, output to a
  log), the baseline;
- ``pytest -rA``: the same with the former ``-rA``; left out above ``--max-ra-tests`` (default
  10,000), where it would take tens of minutes;
- ``runner``: ``runner SUITE --no-shim -j 1`` on a suite of that one file: pytest, then reading
  its XML and log and storing every result in SQLite, and the reports.

and prints each wall time and the ratios ``-rA / -ra`` and ``runner / -ra``. Exit 1 when a run did
not pass or the runner did not store N passed tests.

    python bench/pytest_summary_bench.py RUNNER [--python PY] [--tests 500] [--keep]
"""

import argparse
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

from generated_suite import timed_runner_run, write_pytest_suite

TEST_FILE = """import pytest


@pytest.mark.parametrize("i", range({tests}))
def test_case(i):
    print("output of case", i)
    assert i >= 0
"""


def pytest_direct(python, suite, work, report):
    """Wall time of the runner's pytest command (runner/engine/frameworks/pytest.cpp), with
    ``report`` as its -r option, and its exit code."""
    xml = work / f"direct{report}.xml"
    argv = [
        python,
        "-m",
        "pytest",
        "-v",
        report,
        f"--junitxml={xml}",
        "-o",
        "junit_family=xunit1",
        "-p",
        "no:cacheprovider",
        "tests/test_many_000.py",
    ]
    with open(work / f"direct{report}.log", "wb") as log:
        t0 = time.perf_counter()
        code = subprocess.run(
            argv,
            cwd=suite,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        ).returncode
    return time.perf_counter() - t0, code


def runner_end_to_end(runner, python, suite, work):
    """Wall time of a --no-shim run of the suite, its exit code, and the passed tests it stored."""
    wall, code = timed_runner_run(runner, suite, work, "runner", 1, python)
    passed = 0
    db = work / "runner.db"
    if db.exists():
        with sqlite3.connect(db) as conn:
            query = "SELECT count(*) FROM cases WHERE status = 'passed'"
            passed = conn.execute(query).fetchone()[0]
    return wall, code, passed


def measure(args, tests, root):
    work = root / f"n{tests}"
    suite = write_pytest_suite(
        work / "suite", "pytest-summary-bench", "many", TEST_FILE.replace("{tests}", str(tests)), 1
    )
    ra, ra_code = pytest_direct(args.python, suite, work, "-ra")
    line = f"{tests:>7} tests: pytest -ra {ra:7.1f} s"
    ok = ra_code == 0
    if tests <= args.max_ra_tests:
        ra_all, ra_all_code = pytest_direct(args.python, suite, work, "-rA")
        ok &= ra_all_code == 0
        line += f" | pytest -rA {ra_all:7.1f} s ({ra_all / ra:5.2f} x)"
    else:
        line += f" | pytest -rA  (not run: > {args.max_ra_tests} tests)"
    wall, code, passed = runner_end_to_end(args.runner, args.python, suite, work)
    ok &= code == 0 and passed == tests
    line += f" | runner {wall:7.1f} s ({wall / ra:5.2f} x, {passed} passed stored, exit {code})"
    print(line, flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runner")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--tests", type=int, default=500, help="N: runs N, 10 N and 100 N")
    parser.add_argument("--max-ra-tests", type=int, default=10_000)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="devshim-bench-summary-"))
    print(
        f"pytest_summary_bench: one file of N passing tests, {os.cpu_count()} cores; ratios "
        f"against pytest -ra, the runner's command run directly"
    )
    ok = True
    for tests in (args.tests, 10 * args.tests, 100 * args.tests):
        ok &= measure(args, tests, root)
    if not ok or args.keep:
        print(f"pytest_summary_bench: files kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
