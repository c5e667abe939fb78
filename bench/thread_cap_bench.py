"""The runner's thread cap against torch's own thread count, measured in one run with the real
runner on a generated suite whose files compute on the CPU.

torch (and the BLAS it calls) starts one intra-op thread per core in every process. With ``-j``
files at once, each process would run as many threads as there are cores, and they wait for each
other. The runner sets ``OMP_NUM_THREADS`` to cores / jobs in each test process (unless the user
or the suite set it: runner/engine/launch_plan.h, ``threads_per_process``). This measures a
``--no-shim`` run of ``--files`` (2 x cores) files at ``-j`` cores:

- capped: the runner's default;
- uncapped: the same with ``OMP_NUM_THREADS`` = cores in the runner's environment, which the
  runner then leaves alone, as torch's default is;

alternately, ``--repeats`` times each, and prints each run's wall time and the ratio of the
medians (uncapped / capped: above 1, the cap is faster). Exit 1 when a run did not pass.

    python bench/thread_cap_bench.py RUNNER [--files N] [--repeats 3] [--keep]
"""

import argparse
import os
import pathlib
import shutil
import statistics
import sys
import tempfile

from generated_suite import timed_runner_run, write_pytest_suite

# Matrix products and convolutions, the work of a model test: about 3 s of one core's time.
TEST_FILE = """import torch


def test_compute_{n}():
    torch.manual_seed({n})
    a = torch.randn(256, 256)
    x = torch.randn(8, 16, 32, 32)
    conv = torch.nn.Conv2d(16, 16, 3, padding=1)
    for _ in range(150):
        a = torch.tanh(a @ a / 16)
        x = torch.tanh(conv(x))
    assert torch.isfinite(a).all() and torch.isfinite(x).all()
"""


def run(runner, suite, work, name, jobs, python, threads):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    return timed_runner_run(runner, suite, work, name, jobs, python, env)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runner")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--files", type=int, default=0, help="default: 2 x cores")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    files = args.files or 2 * cores
    work = pathlib.Path(tempfile.mkdtemp(prefix="devshim-bench-threads-"))
    suite = write_pytest_suite(work / "suite", "thread-cap-bench", "compute", TEST_FILE, files)
    print(
        f"thread_cap_bench: {files} files computing on the CPU, -j {cores} on {cores} cores, "
        f"--no-shim; capped: OMP_NUM_THREADS=1 per process (the runner's, cores / jobs), "
        f"uncapped: {cores} (torch's default)"
    )
    times = {"capped": [], "uncapped": []}
    failed = False
    for i in range(args.repeats):
        for kind, threads in (("capped", 0), ("uncapped", cores)):
            wall, code = run(args.runner, suite, work, f"{kind}-{i}", cores, args.python, threads)
            failed |= code != 0
            times[kind].append(wall)
            print(f"  {kind:9} run {i + 1}: {wall:7.1f} s (exit {code})")
    capped, uncapped = (statistics.median(times[k]) for k in ("capped", "uncapped"))
    print(
        f"median: capped {capped:.1f} s, uncapped {uncapped:.1f} s; "
        f"uncapped / capped = {uncapped / capped:.2f}"
    )
    if failed or args.keep:
        print(f"thread_cap_bench: files kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
