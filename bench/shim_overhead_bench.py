"""What the Python shim costs per call: a redirected factory, and torch code it does not touch.

Measures, in one process:

1. factory: ``torch.zeros(16, device="cpu")`` with the original (unpatched) function, against
   ``torch.zeros(16, device="cuda")`` through the shim's patch (redirected to the device used and
   recorded): the extra microseconds per call;
2. untouched: ``x + x`` before and after activation — the shim must not slow down code that makes
   no device request (no global TorchFunctionMode, no patched operators).

Each measurement is the thread's CPU time for ``--calls`` calls in a loop divided by their number
(CPU time, so that waiting for a core on a busy machine is not counted). The two sides
alternate in short blocks (a b, b a, a b, ... ``--rounds`` times; for ``x + x`` the shim is
activated and deactivated between blocks), so that load drifting on a busy machine hits both
alike; the extra cost is the median of the per-round differences, printed with the medians of
each side, the ratio, and what a bare ``*args, **kwargs`` wrapper costs for reference. Exits 1
when the factory's extra cost exceeds ``--max-extra-us`` (default 2.0 µs) or ``x + x`` got slower
by more than 5% + 0.2 µs; 2 when torch is missing. On a loaded machine every call is slower, the
extra cost too: compare with the unpatched time printed.

    python bench/shim_overhead_bench.py [--calls 5000] [--rounds 41]

Expects a CPU-only machine (the comparison "cuda redirected vs cpu plain" assumes a "cuda"
request lands on the CPU); on an accelerator machine the factory comparison is reported but not
judged.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SHIM_DIR = pathlib.Path(os.environ.get("DEVSHIM_SHIM_DIR", REPO_ROOT / "shim" / "python"))


def per_call_us(fn, calls: int) -> float:
    """CPU microseconds per call of fn() over ``calls`` calls (the loop's own cost included).

    The thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not wall-clock time: on a busy machine the
    time this process waits for a core is not a cost of the code measured.
    """
    start = time.thread_time_ns()
    for _ in range(calls):
        fn()
    return (time.thread_time_ns() - start) / calls / 1e3


def paired(measure_a, measure_b, rounds: int):
    """(median a, median b, median of b - a) over ``rounds`` rounds, alternating which goes first.
    """
    a, b = [], []
    for i in range(rounds):
        if i % 2:
            b.append(measure_b())
            a.append(measure_a())
        else:
            a.append(measure_a())
            b.append(measure_b())
    return (statistics.median(a), statistics.median(b),
            statistics.median(y - x for x, y in zip(a, b)), min(a), min(b))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls per measurement")
    parser.add_argument("--rounds", type=int, default=41, help="alternating rounds")
    parser.add_argument("--max-extra-us", type=float, default=2.0)
    args = parser.parse_args(argv)

    try:
        import torch
    except ImportError:
        print("shim_overhead_bench: torch is not importable", file=sys.stderr)
        return 2
    sys.path.insert(0, str(SHIM_DIR))
    for name in ("TORCHDEVICE_RECORD", "TORCHDEVICE_LOG_LEVEL", "TORCH_ALLOW_REDIRECTS"):
        os.environ.pop(name, None)
    import devshim

    devshim.deactivate()
    accelerator = torch.cuda.is_available() or torch.backends.mps.is_available()
    torch.set_num_threads(1)
    x = torch.ones(16)
    original_zeros = torch.zeros

    def bare_wrapper(*args, **kwargs):  # what any Python-level wrapper costs, for reference
        return original_zeros(*args, **kwargs)

    def add():
        return x + x

    # 1. The factory: both sides measured while the shim is active (the original is at hand).
    devshim.activate()
    patched_zeros = torch.zeros
    assert patched_zeros is not original_zeros
    plain = lambda: original_zeros(16, device="cpu")  # noqa: E731
    shim = lambda: patched_zeros(16, device="cuda")  # noqa: E731
    wrapped = lambda: bare_wrapper(16, device="cpu")  # noqa: E731
    for fn in (plain, shim, wrapped):  # warm up: allocator, caches, the call site's first hit
        per_call_us(fn, 2000)
    m_plain, m_shim, extra, min_plain, min_shim = paired(
        lambda: per_call_us(plain, args.calls), lambda: per_call_us(shim, args.calls), args.rounds)
    _, m_wrapped, wrapper_extra, _, _ = paired(
        lambda: per_call_us(plain, args.calls), lambda: per_call_us(wrapped, args.calls),
        max(5, args.rounds // 4))
    devshim.deactivate()

    # 2. x + x with the shim off and on.
    def add_on():
        devshim.activate()
        try:
            return per_call_us(add, args.calls)
        finally:
            devshim.deactivate()

    per_call_us(add, 2000)
    m_before, m_after, add_extra, _, _ = paired(lambda: per_call_us(add, args.calls), add_on,
                                                max(5, args.rounds // 2))

    print(f"calls per measurement: {args.calls}, rounds: {args.rounds} (alternating), "
          f"torch {torch.__version__}, python {sys.version.split()[0]}")
    print(f"factory: torch.zeros(16, device='cpu') unpatched {m_plain:.2f} us/call (min "
          f"{min_plain:.2f}); torch.zeros(16, device='cuda') under the shim {m_shim:.2f} us/call "
          f"(min {min_shim:.2f})")
    print(f"factory: extra {extra:+.2f} us/call, ratio {m_shim / m_plain:.3f} "
          f"(limit +{args.max_extra_us:.2f} us); a bare *args/**kwargs wrapper alone costs "
          f"{wrapper_extra:+.2f} us/call")
    print(f"x + x: before activation {m_before:.2f} us/call, after {m_after:.2f} us/call; "
          f"extra {add_extra:+.2f} us/call, ratio {m_after / m_before:.3f} "
          f"(limit 5% + 0.2 us = {0.05 * m_before + 0.2:.2f} us)")

    failed = []
    if accelerator:
        print("note: an accelerator is present; the factory comparison is not judged")
    elif extra > args.max_extra_us:
        failed.append(f"the factory costs {extra:.2f} us more per call "
                      f"(limit {args.max_extra_us} us)")
    if add_extra > 0.05 * m_before + 0.2:
        failed.append(f"x + x got slower by {add_extra:.2f} us per call")
    for message in failed:
        print(f"FAIL: {message}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
