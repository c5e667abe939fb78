"""The warm start (issue 18) against a cold start and against one pytest process, measured in one
run with the real runner on real suites.

For each suite, with the shim on and ``-j 2`` (and ``-j 1`` for the per-file figure):

- the runner's makespan warm (the default) and ``--cold``;
- one ``python -m pytest`` process over the same files with the shim's environment (what the
  per-file processes cost against: no isolation, no per-file start at all);
- per-file start overhead: (runner at -j 1 - one pytest process) / files, warm and cold;
- the peak resident memory of the largest process of the warm run (ru_maxrss of the runner's
  children: the zygote or a child), from ``os.wait4``;
- bare forks: a process that imports and prepares what the zygote does and then forks one
  pytest session per file, one at a time, with no runner around it: its imports and its time a
  file bound what a warm start of one session per file can take (imports + files x per file / 2
  at -j 2, as if two cores halved it).

Suites: a generated suite of ``--files`` (200) small pytest files that import torch, and the
bundled ``suites/cuda-idioms``. Goals (issue 18): warm <= 50 ms per file, cold about 1.5 s here;
warm <= 1.3x one pytest process.

    python bench/warm_start_bench.py RUNNER [--files 200] [--keep]
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from generated_suite import write_pytest_suite

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SHIM_DIR = pathlib.Path(os.environ.get("DEVSHIM_SHIM_DIR", REPO_ROOT / "shim" / "python"))

TEST_FILE = '''import torch


def test_ones_{n}():
    x = torch.ones(8, device="cuda")
    assert x.sum().item() == 8


def test_matmul_{n}():
    a = torch.randn(16, 16).cuda()
    assert (a @ torch.eye(16, device="cuda")).allclose(a)
'''


def timed(argv, env=None, cwd=None):
    """(wall seconds, peak RSS MiB of the largest descendant) of one command."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"warm_start_bench: {argv[:3]} exited {status}")
    return wall, usage.ru_maxrss / 1024


def runner_run(runner, suite, work, name, jobs, cold, python):
    argv = [runner, str(suite), "--db", str(work / f"{name}.db"), "--out", str(work / name),
            "-j", str(jobs), "--python", python]
    if cold:
        argv.append("--cold")
    # wait4's ru_maxrss: the largest of the runner and every descendant it waited for (the
    # zygote's children are re-parented to it and waited for).
    return timed(argv)


def shim_env():
    return dict(os.environ, ACTIVATE_TORCH_DEVICE="1", PYTORCH_ENABLE_MPS_FALLBACK="1",
                PYTHONPATH=str(SHIM_DIR), PYTHONUNBUFFERED="1")


def suite_files(suite):
    return sorted(str(p) for p in (suite / "tests").glob("test_*.py"))


def one_pytest(suite, python):
    files = suite_files(suite)
    wall, _ = timed([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
                    env=shim_env(), cwd=suite)
    return wall, len(files)


# The zygote's own work with no runner around it: a parent that imports what the zygote imports
# and prepares what it prepares (runner/engine/zygote/devshim_zygote.py's functions), then forks
# one pytest session per file, one at a time, each set up as a warm child is (finalizers left to
# the parent, pytest's configuration from the parent). No second fork, no log, no environment to
# apply, no runner waiting, parsing or storing. Prints the seconds of the imports and of the files.
BARE_FORKS = r"""
import gc, os, runpy, sys, time
start = time.perf_counter()
sys.path.insert(0, os.environ["DEVSHIM_ZYGOTE_DIR"])
import devshim_zygote as z
import torch, torch._dynamo, pytest
z.prepare_framework(["torch", "torch._dynamo", "pytest"])
gc.collect()
z.freeze_heap()
z.quiesce()
ready = time.perf_counter()
for path in sys.argv[1:]:
    args = ["-q", "-p", "no:cacheprovider", path]
    request = {"argv": ["-m", "pytest", *args], "cwd": os.getcwd(), "env": dict(os.environ)}
    config = z.PYTEST_TEMPLATES.for_request(request)
    z.freeze_heap()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        z.disown_finalizers()
        if config is not None:
            z.PytestTemplate.use(config)
        sys.argv = ["pytest", *args]
        try:
            runpy.run_module("pytest", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as e:
            code = z.exit_code(e.code)
        z.finish(code)
    os.waitpid(pid, 0)
print(ready - start, time.perf_counter() - ready)
"""


def bare_forks(suite, python):
    """(seconds to import, seconds a file) of BARE_FORKS over the suite's files: what a warm
    start of one pytest session per file costs without the runner."""
    files = suite_files(suite)
    env = dict(shim_env(), DEVSHIM_ZYGOTE_DIR=str(REPO_ROOT / "runner" / "engine" / "zygote"))
    out = subprocess.run([python, "-c", BARE_FORKS, *files], env=env, cwd=suite,
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]) / len(files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runner")
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="devshim-warm-bench-"))
    try:
        generated = write_pytest_suite(work / "generated", "warm-bench", "gen", TEST_FILE,
                                       args.files)
        suites = [("generated", generated), ("cuda-idioms", REPO_ROOT / "suites" / "cuda-idioms")]
        for label, suite in suites:
            single, files = one_pytest(suite, args.python)
            imports, per_file = bare_forks(suite, args.python)
            results = {}
            for mode in ("warm", "cold"):
                for jobs in (1, 2):
                    results[mode, jobs] = runner_run(args.runner, suite, work,
                                                     f"{label}-{mode}-{jobs}", jobs,
                                                     mode == "cold", args.python)
            print(f"{label}: {files} files; one pytest process: {single:.1f} s")
            for jobs in (2, 1):
                w, c = results["warm", jobs][0], results["cold", jobs][0]
                print(f"  -j {jobs}: warm {w:.1f} s, cold {c:.1f} s: cold / warm {c / w:.2f}x; "
                      f"warm / one pytest {w / single:.2f}x (goal <= 1.3x at -j 2)")
            w1, c1 = results["warm", 1][0], results["cold", 1][0]
            print(f"  per-file start overhead at -j 1 (runner - one pytest) / files: warm "
                  f"{1000 * (w1 - single) / files:.0f} ms, cold {1000 * (c1 - single) / files:.0f}"
                  f" ms (goals: warm <= 50 ms, cold ~1500 ms)")
            bound = imports + files * per_file / 2
            print(f"  bare forks (the zygote's imports, one pytest session a file, no runner): "
                  f"imports {imports:.1f} s, {1000 * per_file:.0f} ms a file; at -j 2, two at "
                  f"once, at least {bound:.1f} s = {bound / single:.2f}x one pytest")
            print(f"  peak RSS of the largest process, warm -j 2: {results['warm', 2][1]:.0f} MiB;"
                  f" cold: {results['cold', 2][1]:.0f} MiB")
            sys.stdout.flush()
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
