"""A pytest suite written for a benchmark: ``files`` test files from one template, and its
suite.json (docs/suites.md); and a timed ``--no-shim`` run of the runner on it. Shared by the
Python benchmarks that run the runner on one."""

import json
import subprocess
import time


def write_pytest_suite(root, name, stem, template, files):
    """Writes ``root/tests/test_<stem>_NNN.py`` (``template.format(n=NNN)``) for NNN below
    ``files`` and ``root/suite.json`` naming the suite ``name``; returns ``root``."""
    (root / "tests").mkdir(parents=True)
    for n in range(files):
        (root / "tests" / f"test_{stem}_{n:03}.py").write_text(template.format(n=n))
    suite = {
        "name": name,
        "project_root": ".",
        "tests_dir": "tests",
        "framework": "pytest",
        "timeout_s": 600,
    }
    (root / "suite.json").write_text(json.dumps(suite) + "\n")
    return root


def timed_runner_run(runner, suite, work, name, jobs, python, env=None):
    """(wall seconds, exit code) of ``runner SUITE --no-shim -j JOBS --python PYTHON`` with its
    database ``work/<name>.db`` and its output in ``work/<name>``, its own output discarded."""
    argv = [
        runner,
        str(suite),
        "--no-shim",
        "--db",
        str(work / f"{name}.db"),
        "--out",
        str(work / name),
        "-j",
        str(jobs),
        "--python",
        python,
    ]
    t0 = time.perf_counter()
    code = subprocess.run(
        argv,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        check=False,
    ).returncode
    return time.perf_counter() - t0, code
