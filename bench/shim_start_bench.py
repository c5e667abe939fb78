"""What the Python shim adds to an interpreter's start when the program never imports torch.

Every test process the runner starts has the shim's folder on PYTHONPATH and, on a shim run,
ACTIVATE_TORCH_DEVICE=1. This measures, in one run, ``python -c pass`` started three ways:

1. bare: no PYTHONPATH, no ACTIVATE_TORCH_DEVICE (the baseline);
2. inactive: PYTHONPATH=shim/python (devshim's sitecustomize runs, the shim stays off);
3. active: PYTHONPATH=shim/python and ACTIVATE_TORCH_DEVICE=1 (devshim is imported and installs
   its torch import hook; torch is never imported, so nothing is patched).

Each start's cost is the child's CPU time (user + system, from ``os.wait4``), so that waiting for
a core on a busy machine is not counted; wall-clock medians are printed too. The three ways
alternate, in a rotating order, ``--rounds`` times, so that load drifting hits them alike; the
extra cost is the median of the per-round differences against bare. Exits 1 when activation adds
more than ``--max-extra-ms`` (issue 17 item 5: 2.0 ms) of CPU time.

The children may write the shim's .pyc files (PYTHONDONTWRITEBYTECODE is dropped from their
environment) as an installed shim would have them; ``--no-bytecode-cache`` measures the other
case, where sitecustomize.py and devshim/__init__.py are compiled at every start.

    python bench/shim_start_bench.py [--rounds 60]

The per-call cost of a redirected call once torch is imported is shim_overhead_bench.py's.
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SHIM_DIR = pathlib.Path(os.environ.get("DEVSHIM_SHIM_DIR", REPO_ROOT / "shim" / "python"))


def start_once(env):
    """(CPU ms, wall ms) of one ``python -c pass`` with ``env``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "pass"], env=env, stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - t0) * 1e3
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"shim_start_bench: python -c pass exited {proc.returncode}")
    return (usage.ru_utime + usage.ru_stime) * 1e3, wall


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60, help="alternating rounds")
    parser.add_argument("--max-extra-ms", type=float, default=2.0)
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="start with PYTHONDONTWRITEBYTECODE=1 (without .pyc files the shim's "
                             "modules are compiled at every start)")
    args = parser.parse_args(argv)

    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "ACTIVATE_TORCH_DEVICE", "PYTHONSTARTUP")
            and not k.startswith("TORCHDEVICE_")}
    if not args.no_bytecode_cache:
        # As an installed shim runs: its .pyc files written once (by the warm-up) and read after.
        base.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        base["PYTHONDONTWRITEBYTECODE"] = "1"
    envs = {
        "bare": base,
        "inactive": {**base, "PYTHONPATH": str(SHIM_DIR)},
        "active": {**base, "PYTHONPATH": str(SHIM_DIR), "ACTIVATE_TORCH_DEVICE": "1"},
    }
    names = list(envs)
    for name in names:  # warm up: page cache, .pyc files
        for _ in range(3):
            start_once(envs[name])
    cpu = {n: [] for n in names}
    wall = {n: [] for n in names}
    for i in range(args.rounds):
        order = names[i % 3:] + names[:i % 3]
        for name in order:
            c, w = start_once(envs[name])
            cpu[name].append(c)
            wall[name].append(w)

    print(f"python -c pass, {args.rounds} rounds (rotating order), "
          f"python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}, "
          f"{'no bytecode cache' if args.no_bytecode_cache else 'bytecode cached'}")
    extras = {}
    for name in names:
        extra = statistics.median(b - a for a, b in zip(cpu["bare"], cpu[name]))
        extras[name] = extra
        wall_extra = statistics.median(b - a for a, b in zip(wall["bare"], wall[name]))
        median = statistics.median(cpu[name])
        ratio = median / statistics.median(cpu["bare"])
        print(f"{name:9s} CPU {median:6.2f} ms (min {min(cpu[name]):6.2f}), "
              f"extra {extra:+5.2f} ms, ratio {ratio:.3f}; "
              f"wall {statistics.median(wall[name]):6.2f} ms, extra {wall_extra:+5.2f} ms")
    if extras["active"] > args.max_extra_ms:
        print(f"FAIL: activation adds {extras['active']:.2f} ms of CPU time per start "
              f"(limit {args.max_extra_ms} ms)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
