"""`runner import` against TorchDevice's own log parser, on the same generated logs (issue 17).

Generates, for each size (800 and 51,200 test files by default), a folder of logs laid out
exactly as TorchDevice's ``test_automation/run_transformer_tests.py`` writes them (see
tests/runner/fixtures/torchdevice/README.md): an overall log ``bench_<timestamp>.log`` with its
``Finished test:`` / ``  Log file:`` / ``  Test Command:`` entries and closing summary, and one
``<project>/<path below tests/>.log`` per file with the runner's header and trailer around
``unittest -v`` output (TorchDevice's own ``[TORCHDEVICE]`` lines, passing, skipped and failing
tests with tracebacks, a few import errors and crashes). Then, in one run, for each size:

- **peer**: ``python parse_transformer_log_summary.py <overall log> --output-dir OUT`` from a
  TorchDevice checkout (cwd = the fake TorchDevice root the ``Log file:`` paths are relative to),
  end to end: interpreter start-up, parsing, writing its JSON;
- **runner import**: ``runner import LOGDIR --db NEW.db``, end to end: start-up, parsing, writing
  the SQLite database.

and, as a bound on what any import into this schema can reach:

- **SQLite alone**: every row the import stored, copied into an empty database of the same
  schema (its indexes included, as the import has them while writing) with one ``INSERT ...
  SELECT`` per table in one transaction: no reading or parsing of logs, no per-row calls. peer /
  this is the largest ratio a per-test row store can show here.

Each side's wall-clock time (best of ``--repeat`` for the small size, alternating, one run for
sizes over 10,000 files), peak memory (GNU time's ``%M``; without it, ``wait4``'s ru_maxrss, an
upper bound that includes this script's memory), the ratio peer / import, and the database size
against the logs' size are printed. Without a TorchDevice checkout (``--torchdevice DIR`` or
``$DEVSHIM_TORCHDEVICE``; ``test_automation/parse_transformer_log_summary.py`` inside) the peer is
skipped with a message and only the import is measured.

    python bench/import_bench.py --runner build/runner/runner [--torchdevice DIR]
        [--sizes 800,51200] [--repeat 3] [--keep]

Exits 0 when every measurement was taken, 1 when a command failed (its output is printed).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

PEER_SCRIPT = "test_automation/parse_transformer_log_summary.py"
TORCHDEVICE_NOISE = [
    "[TORCHDEVICE] [INFO] Initializing TorchDevice core device module",
    "[TORCHDEVICE] [INFO] TorchDevice core device module initialized",
    "[TORCHDEVICE] [INFO] [HW_INFO] Native MPS available: True",
    "[TORCHDEVICE] [INFO] Initializing TorchDevice CUDA operations module",
    "[TORCHDEVICE] [INFO] TorchDevice CUDA operations module initialized",
    "[TORCHDEVICE] [INFO] Initializing TorchDevice random operations module",
]
SKIP_REASONS = ["test requires CUDA", "test is slow", "not supported on MPS",
                "Model has no tokens embeddings"]
FAILURES = [
    ("AssertionError", "{x} not less than or equal to 1e-05",
     "    self.assertLessEqual(diff, 1e-05)"),
    ("RuntimeError", "Cannot get CUDA generator without ATen_cuda library",
     "    torch.cuda.manual_seed_all(seed)"),
    ("AssertionError", "Tensor-likes are not close!",
     "    torch.testing.assert_close(out, expected)"),
    ("NotImplementedError",
     "The operator 'aten::_fft_r2c' is not currently implemented for the MPS device.",
     "    spec = torch.stft(x, 400)"),
]
TEST_NAMES = ["test_attention_outputs", "test_config", "test_forward_signature",
              "test_hidden_states_output", "test_initialization", "test_inputs_embeds",
              "test_model", "test_model_common_attributes", "test_model_from_pretrained",
              "test_resize_tokens_embeddings", "test_save_load", "test_training",
              "test_training_gradient_checkpointing", "test_torch_fx", "test_retain_grad",
              "test_headmasking", "test_feed_forward_chunking", "test_load_with_mismatched_shapes",
              "test_model_outputs_equivalence", "test_problem_types", "test_tie_model_weights",
              "test_determinism", "test_batching_equivalence", "test_can_use_safetensors",
              "test_correct_missing_keys", "test_equivalence_pt_to_flax",
              "test_gradient_checkpointing"]


def generate(root: pathlib.Path, files: int, seed: int = 17) -> tuple[pathlib.Path, int]:
    """A fake TorchDevice root with test_automation/logs; returns the logs folder and its bytes."""
    rnd = random.Random(seed)
    logs = root / "test_automation" / "logs"
    project = "transformers"
    total = 0
    entries = []
    for i in range(files):
        model = f"m{i // 2:05d}"
        rel = f"models/{model}/test_modeling_{model}{'_tf' if i % 2 else ''}.py"
        module = "tests." + rel[:-3].replace("/", ".")
        klass = f"{model.capitalize()}ModelTest"
        log = logs / project / (rel + ".log")
        log.parent.mkdir(parents=True, exist_ok=True)
        out = [f"Test: {module}", f"Command: python -m unittest -v {module}",
               "PYTHONPATH: /Users/me/TorchDevice:/Users/me/transformers/src",
               "CWD: /Users/me/transformers", "Timestamp: 2025-06-21T15:17:42.123456", ""]
        out += TORCHDEVICE_NOISE
        kind = rnd.random()
        rc, status = 0, "SUCCESS"
        failures = []
        if kind < 0.02:  # import error
            out.append(f"test_modeling_{model} (unittest.loader._FailedTest.test_modeling_{model})"
                       " ... ERROR")
            failures.append(("ERROR", f"test_modeling_{model}", "unittest.loader._FailedTest",
                             "ImportError", f"cannot import name '{klass}' from 'transformers'",
                             "    from transformers import " + klass))
            ran, rc, status = 1, 1, "FAILURE"
        else:
            names = TEST_NAMES[: rnd.randint(15, len(TEST_NAMES))]
            crash_at = rnd.randrange(len(names)) if kind > 0.99 else -1
            ran = 0
            for j, name in enumerate(names):
                head = f"{name} ({module}.{klass}.{name}) ... "
                if j == crash_at:
                    out.append(head)
                    rc, status = -11, "CRITICAL_FAILURE"
                    break
                ran += 1
                r = rnd.random()
                if r < 0.12:
                    out.append(head + f"skipped '{rnd.choice(SKIP_REASONS)}'")
                elif r < 0.16:
                    exc, msg, code = rnd.choice(FAILURES)
                    msg = msg.format(x=rnd.choice(["0.79", "0.81", "1.5"]))
                    verdict = "FAIL" if exc == "AssertionError" else "ERROR"
                    out.append(head + verdict)
                    failures.append((verdict, name, f"{module}.{klass}", exc, msg, code))
                else:
                    out.append(head + "ok")
                if rnd.random() < 0.3:  # what TorchDevice logs while a test runs
                    out.append(f'GPU REDIRECT - [python -m unittest] "{name}" in File: '
                               f"/Users/me/transformers/tests/{rel}:{100 + j} - Called: "
                               "torch_device_replacement returned: mps")
            if failures and rc == 0:
                rc, status = 1, "FAILURE"
        if rc >= 0:
            for verdict, name, cls, exc, msg, code in failures:
                out += ["", "=" * 70, f"{verdict}: {name} ({cls}.{name})", "-" * 70,
                        "Traceback (most recent call last):",
                        f'  File "/Users/me/transformers/tests/{rel}", line {100 + len(name)}, '
                        f"in {name}", code, f"{exc}: {msg}"]
            out += ["", "-" * 70, f"Ran {ran} tests in {rnd.uniform(0.5, 60):.3f}s", ""]
            nf = sum(1 for f in failures if f[0] == "FAIL")
            ne = len(failures) - nf
            out.append("OK" if not failures else
                       "FAILED (" + ", ".join(p for p in [f"failures={nf}" if nf else "",
                                                          f"errors={ne}" if ne else ""] if p) + ")")
        seconds = rnd.uniform(1, 120)
        duration = f"0:{int(seconds) // 60:02d}:{seconds % 60:09.6f}"
        out += ["", "Finished at: 2025-06-21T15:19:42.123456", f"Duration: {duration}",
                f"Return code: {rc}", ""]
        text = "\n".join(out)
        log.write_text(text)
        total += len(text.encode())
        entries.append((i, module, rel, status, rc, duration))
    overall = logs / "models_2025-06-21_15-17-42.log"
    lines = ["Target project repo: ../transformers", "TorchDevice repo: TorchDevice (CWD)",
             f"Log directory for individual tests: test_automation/logs/{project}",
             f"Overall run log file: test_automation/logs/{overall.name}", "",
             f"Found {files} test files to run:"]
    lines += [f"  - tests/{e[2]}" for e in entries]
    lines.append("-" * 50)
    for i, module, rel, status, rc, duration in entries:
        lines += ["", f"Preparing to run test {i + 1}/{files}: {pathlib.Path(rel).name}",
                  f"Finished test: {module} - Status: {status} (RC: {rc}) Duration: {duration}",
                  f"  Log file: test_automation/logs/{project}/{rel}.log",
                  f"  Test Command: python -m unittest -v {module}", "-" * 50]
    lines += ["", "=" * 20 + " Test Run Summary " + "=" * 20]
    for _, module, rel, status, rc, duration in entries:
        lines += [f"Module: {module}", f"  Status: {status} (Return Code: {rc})",
                  f"  Log: test_automation/logs/{project}/{rel}.log",
                  f"  Test Command: python -m unittest -v {module}", f"  Duration: {duration}"]
    text = "\n".join(lines) + "\n"
    overall.write_text(text)
    total += len(text.encode())
    return logs, total


GNU_TIME = shutil.which("time", path="/usr/bin:/bin")


def measure(argv: list[str], cwd: pathlib.Path) -> tuple[float, float, str]:
    """Wall-clock seconds, peak RSS in MiB, and output of one command; raises on failure.

    The peak comes from GNU time (``/usr/bin/time -f %M``) when it is installed: ru_maxrss from
    wait4 would include the memory of this Python process, which the child has until it execs.
    Without GNU time it is that upper bound (marked ``<=``)."""
    stats = None
    if GNU_TIME:
        fd, stats = tempfile.mkstemp(prefix="devshim-bench-time-")
        os.close(fd)
        argv = [GNU_TIME, "-q", "-f", "%M", "-o", stats] + argv
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak = -usage.ru_maxrss / 1024  # negative: an upper bound
    if stats:
        text = pathlib.Path(stats).read_text().strip().splitlines()
        os.unlink(stats)
        if text and text[-1].isdigit():
            peak = int(text[-1]) / 1024
    output = out.decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{output}")
    return elapsed, peak, output


def sqlite_alone(db: pathlib.Path, tmp: pathlib.Path) -> float:
    """Seconds SQLite takes to store every row of db again: an empty database with db's schema
    (tables and indexes, made first and not timed), then one INSERT ... SELECT per table from db
    in one transaction, with the store's journal mode and synchronous setting."""
    floor = tmp / "sqlite-alone.db"
    for p in (floor, pathlib.Path(f"{floor}-wal"), pathlib.Path(f"{floor}-shm")):
        p.unlink(missing_ok=True)
    src = sqlite3.connect(db)
    objects = src.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                          "AND name NOT LIKE 'sqlite_%' ORDER BY type = 'table' DESC, rowid")
    objects = objects.fetchall()
    src.close()
    con = sqlite3.connect(floor, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    for _, _, sql in objects:
        con.execute(sql)
    con.execute("ATTACH DATABASE ? AS src", (str(db),))
    tables = [name for kind, name, _ in objects if kind == "table"]
    start = time.perf_counter()
    con.execute("BEGIN")
    for name in tables:
        con.execute(f'INSERT INTO main."{name}" SELECT * FROM src."{name}"')
    con.execute("COMMIT")
    elapsed = time.perf_counter() - start
    con.close()
    return elapsed


def peak_text(mib: float) -> str:
    return f"peak {mib:6.1f} MiB" if mib >= 0 else f"peak <= {-mib:6.1f} MiB"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runner", required=True, type=pathlib.Path)
    ap.add_argument("--torchdevice", type=pathlib.Path,
                    default=os.environ.get("DEVSHIM_TORCHDEVICE") or None)
    ap.add_argument("--sizes", default="800,51200")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()

    peer = None
    if args.torchdevice and (args.torchdevice / PEER_SCRIPT).is_file():
        peer = (args.torchdevice / PEER_SCRIPT).resolve()
    else:
        print(f"import_bench: peer skipped: no TorchDevice checkout with {PEER_SCRIPT} "
              "(give --torchdevice DIR or set DEVSHIM_TORCHDEVICE); measuring runner import only")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="devshim-bench-"))
    ok = False
    try:
        for size in [int(s) for s in args.sizes.split(",") if s]:
            root = tmp / f"td{size}"
            t0 = time.perf_counter()
            logs, log_bytes = generate(root, size)
            overall = next(logs.glob("*.log"))
            print(f"import_bench: {size} files, {log_bytes / 1e6:.1f} MB of logs "
                  f"(generated in {time.perf_counter() - t0:.1f} s)")
            repeat = args.repeat if size <= 10000 else 1
            best_imp = best_peer = None
            db = tmp / f"r{size}.db"
            for r in range(repeat):
                for side in (["peer", "import"] if r % 2 == 0 else ["import", "peer"]):
                    if side == "import":
                        for p in (db, pathlib.Path(f"{db}-wal"), pathlib.Path(f"{db}-shm")):
                            p.unlink(missing_ok=True)
                        res = measure([str(args.runner.resolve()), "import", str(logs),
                                       "--db", str(db)], tmp)
                        if best_imp is None or res[0] < best_imp[0]:
                            best_imp = res
                    elif peer:
                        out = tmp / f"peer{size}"
                        shutil.rmtree(out, ignore_errors=True)
                        res = measure([sys.executable, str(peer), str(overall.relative_to(root)),
                                       "--output-dir", str(out)], root)
                        if best_peer is None or res[0] < best_peer[0]:
                            best_peer = res
            db_bytes = db.stat().st_size
            print(f"  runner import   {best_imp[0]:8.3f} s  {peak_text(best_imp[1])}  "
                  f"database {db_bytes / 1e6:.1f} MB ({db_bytes / log_bytes:.2f}x the logs)")
            print(f"    {best_imp[2].strip()}")
            alone = min(sqlite_alone(db, tmp) for _ in range(repeat))
            print(f"  SQLite alone    {alone:8.3f} s  (the same rows stored with INSERT ... "
                  "SELECT: a bound on any import into this schema)")
            if best_peer:
                print(f"  peer parser     {best_peer[0]:8.3f} s  {peak_text(best_peer[1])}")
                print(f"  ratio peer / import: {best_peer[0] / best_imp[0]:.1f}x "
                      f"(best of {repeat}); peer / SQLite alone: {best_peer[0] / alone:.1f}x")
        ok = True
        return 0
    except RuntimeError as e:
        print(f"import_bench: {e}")
        return 1
    finally:
        if args.keep or not ok:
            print(f"import_bench: kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
