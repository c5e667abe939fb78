"""The import sweep: every module of installed packages imported with and without the shim.

``python -m devshim sweep PACKAGE ...`` lists the modules of each package from its files (the
package is not imported to list them: ``pkgutil.walk_packages`` would, in this process), then
imports them in child processes of the same interpreter, chunk by chunk, once without the shim
and once with it (``ACTIVATE_TORCH_DEVICE=1``, the shim folder first on ``PYTHONPATH``, as the
runner starts a test process). Each module is imported alone: in a fork of a process that has
imported only the packages above it, as Python imports them before it (``alone``; where there is
no fork, or with ``--together``, a chunk's modules are imported one after another in one process,
which is faster and blind to a module that fails alone but not after another). A module that
fails only with the shim is imported again alone in a fresh process both ways: it is reported as
failing with the shim only when it still does (otherwise it is listed apart as order-dependent:
it failed only after another module of its chunk, or only in a fork).

Contracts:
- ``modules_of(package)``: the dotted names of the package and every module and subpackage under
  it, from the file system (``pkgutil.iter_modules``' rules: a folder is a subpackage when it has an
  ``__init__``; ``__main__`` modules are left out, as importing them runs a program).
- ``sweep(names, ...)``: every name gets an outcome in both modes: "ok", or the exception's type
  and first line, or "crashed (signal N)" / "timed out after S s" for an import that killed or
  hung its process (the chunk's other modules go on in a new process). Child processes never
  print into this process's output; a child's stdout and stderr go to /dev/null, the outcomes
  come back on their own pipe.
- Exit status of ``main``: 0 when no module fails only with the shim, 1 when some do, 2 on bad
  usage (an unknown package).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import importlib.machinery
import importlib.util
import json
import os
import selectors
import subprocess
import sys
import time

__all__ = ["modules_of", "sweep", "Outcome", "Report", "main"]



def default_shim_dir() -> str:
    """The folder with devshim's sitecustomize.py, which the shimmed children put first on
    PYTHONPATH: this package's parent (a checkout's shim/python, the wheel's share/devshim/shim),
    or, for the copy of the package that pip put into site-packages beside no sitecustomize.py,
    the wheel's <prefix>/share/devshim/shim (docs/install.md)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    installed = os.path.join(sys.prefix, "share", "devshim", "shim")
    if not os.path.isfile(os.path.join(here, "sitecustomize.py")) and \
            os.path.isfile(os.path.join(installed, "sitecustomize.py")):
        return installed
    return here


SHIM_DIR = default_shim_dir()

# The child: reads module names on stdin, one per line; for each, writes {"start": name} and then
# {"module": name, "error": null | "Type: message"} on the descriptor given in argv[1]. Its own
# stdout and stderr are /dev/null (modules print at import); it leaves with os._exit so that
# threads a module started cannot keep it alive.
#
# Alone (argv[2] == "alone"): each module is imported in a fork of a process that has imported
# its parent packages and nothing else, as a fresh interpreter importing it alone would (Python
# imports "a", then "a.b", before "a.b.c"): a fork per package holds the packages above it, and a
# fork per module imports it there. So no module is imported after an unrelated one, and a
# package is imported once for all the modules below it. A fork that a signal or an exit status
# ended is reported as {"died": name, "error": "crashed (signal N)" | "exited (N)"}: that module,
# or the package that all the names below it import first.
# Together (argv[2] == "together"): the modules are imported one after another in this process.
_CHILD = r"""
import json, os, sys
out = os.fdopen(int(sys.argv[1]), "w", buffering=1)
def say(doc):
    out.write(json.dumps(doc) + "\n")
def attempt(name):
    say({"start": name})
    try:
        __import__(name)
        error = None
    except BaseException as e:
        text = (str(e).strip().splitlines() or [""])[0][:300]
        error = f"{type(e).__name__}: {text}" if text else type(e).__name__
    say({"module": name, "error": error})
def visit(base, names, wanted):
    groups = {}
    for name in names:
        head = (name[len(base) + 1:] if base else name).split(".", 1)[0]
        groups.setdefault(f"{base}.{head}" if base else head, []).append(name)
    for top, members in groups.items():
        pid = os.fork()
        if pid == 0:
            try:
                if top in wanted:
                    attempt(top)
                else:
                    try:
                        __import__(top)
                    except BaseException:
                        pass
                below = [n for n in members if n != top]
                if below:
                    visit(top, below, wanted)
            finally:
                out.flush()
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            say({"died": top, "error": f"crashed (signal {os.WTERMSIG(status)})"})
        elif os.WEXITSTATUS(status):
            say({"died": top, "error": f"exited ({os.WEXITSTATUS(status)})"})
names = [line.strip() for line in sys.stdin if line.strip()]
if sys.argv[2] == "alone":
    visit("", sorted(names), set(names))
else:
    for name in names:
        attempt(name)
out.flush()
os._exit(0)
"""

# Whether modules can be imported alone at the cost of a fork each (not on Windows).
CAN_FORK = hasattr(os, "fork")


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One module's import without the shim (``plain``) and with it (``shimmed``): None for a
    clean import, else what went wrong."""

    module: str
    plain: str | None
    shimmed: str | None


@dataclasses.dataclass
class Report:
    outcomes: list[Outcome]
    only_with_shim: list[Outcome]  # confirmed alone in a fresh process
    order_dependent: list[Outcome]  # failed with the shim in its chunk only
    seconds: float

    def counts(self) -> dict:
        return {"modules": len(self.outcomes),
                "fail_without_shim": sum(o.plain is not None for o in self.outcomes),
                "fail_with_shim": sum(o.shimmed is not None for o in self.outcomes),
                "fail_only_with_shim": len(self.only_with_shim),
                "order_dependent": len(self.order_dependent)}

    def to_json(self) -> dict:
        return {"counts": self.counts(), "seconds": round(self.seconds, 1),
                "only_with_shim": [dataclasses.asdict(o) for o in self.only_with_shim],
                "order_dependent": [dataclasses.asdict(o) for o in self.order_dependent],
                "fail_without_shim": sorted(o.module for o in self.outcomes
                                            if o.plain is not None)}


def _is_identifier_path(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


def modules_of(package: str) -> list[str]:
    """``package`` and every module below it, from its files (sorted; never imports it)."""
    if "." in package:
        raise ValueError(f"{package!r}: give a top-level package")
    spec = importlib.util.find_spec(package)
    if spec is None:
        raise ValueError(f"no package or module named {package!r} in this environment")
    names = [package]
    locations = spec.submodule_search_locations
    if not locations:
        return names
    suffixes = sorted(importlib.machinery.all_suffixes(), key=len, reverse=True)
    pending = [(package, list(locations))]
    while pending:
        prefix, folders = pending.pop()
        seen = set()
        for folder in folders:
            try:
                entries = sorted(os.listdir(folder))
            except OSError:
                continue
            for entry in entries:
                path = os.path.join(folder, entry)
                if os.path.isdir(path):
                    if any(os.path.isfile(os.path.join(path, "__init__" + s)) for s in suffixes):
                        name = f"{prefix}.{entry}"
                        if entry.isidentifier() and name not in seen:
                            seen.add(name)
                            names.append(name)
                            pending.append((name, [path]))
                    continue
                for suffix in suffixes:
                    if entry.endswith(suffix):
                        stem = entry[: -len(suffix)]
                        name = f"{prefix}.{stem}"
                        if (stem not in ("__init__", "__main__") and stem.isidentifier()
                                and name not in seen):
                            seen.add(name)
                            names.append(name)
                        break
    return sorted(names)


def _environment(shimmed: bool, shim_dir: str) -> dict:
    env = dict(os.environ)
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
             if p and os.path.abspath(p) != os.path.abspath(shim_dir)]
    if shimmed:
        env["ACTIVATE_TORCH_DEVICE"] = "1"
        parts.insert(0, shim_dir)
    else:
        env.pop("ACTIVATE_TORCH_DEVICE", None)
    if parts:
        env["PYTHONPATH"] = os.pathsep.join(parts)
    else:
        env.pop("PYTHONPATH", None)
    env["PYTHONWARNINGS"] = "ignore"
    return env


def _fail_below(top, error, names, results) -> None:
    """``top`` and the names below it (which import it first) that have no outcome fail so."""
    for name in names:
        if name not in results and (name == top or name.startswith(top + ".")):
            results[name] = error


def _import_chunk(names, shimmed, shim_dir, python, timeout, alone=CAN_FORK):
    """{name: outcome} for ``names``, each imported alone (in a fork: see _CHILD) or in order one
    after another, in as few child processes as it takes."""
    results = {}
    rest = list(names)
    env = _environment(shimmed, shim_dir)
    while rest:
        read_fd, write_fd = os.pipe()
        child = subprocess.Popen([python, "-c", _CHILD, str(write_fd),
                                  "alone" if alone else "together"], env=env,
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, pass_fds=(write_fd,), text=True,
                                 start_new_session=True)
        os.close(write_fd)
        try:
            child.stdin.write("".join(n + "\n" for n in rest))
            child.stdin.close()
        except BrokenPipeError:
            pass
        started, hung = None, False
        selector = selectors.DefaultSelector()
        selector.register(read_fd, selectors.EVENT_READ)
        buffered = b""
        deadline = time.monotonic() + timeout
        try:
            while True:
                if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                    hung = True
                    break
                data = os.read(read_fd, 65536)
                if not data:
                    break
                buffered += data
                *complete, buffered = buffered.split(b"\n")
                for line in complete:
                    doc = json.loads(line)
                    if "start" in doc:
                        if started is not None:  # a fork that left with status 0 mid-import
                            _fail_below(started, "exited (0)", rest, results)
                        started = doc["start"]
                        deadline = time.monotonic() + timeout
                    elif "died" in doc:
                        _fail_below(doc["died"], doc["error"], rest, results)
                        started = None
                    else:
                        results[doc["module"]] = doc["error"]
                        started = None
        finally:
            selector.close()
            os.close(read_fd)
        if hung:
            os.killpg(child.pid, 9)
        child.wait()
        if started is not None:
            results[started] = (f"timed out after {timeout:g} s" if hung else
                                f"crashed (signal {-child.returncode})" if child.returncode < 0
                                else f"exited ({child.returncode})")
        rest = [n for n in rest if n not in results]
        if started is None and rest:  # the child died between two modules
            results[rest[0]] = f"crashed (exit {child.returncode})"
            rest = rest[1:]
    return results


def sweep(names, *, jobs=2, chunk=300, shim_dir=SHIM_DIR, python=sys.executable, timeout=300.0,
          confirm=True, alone=CAN_FORK) -> Report:
    """Imports ``names`` without and with the shim (see the module's contracts)."""
    begin = time.monotonic()
    names = sorted(set(names))
    chunks = [names[i:i + chunk] for i in range(0, len(names), chunk)]
    plain, shimmed = {}, {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(_import_chunk, c, mode, shim_dir, python, timeout, alone): mode
                   for c in chunks for mode in (False, True)}
        for future in concurrent.futures.as_completed(futures):
            (shimmed if futures[future] else plain).update(future.result())
    outcomes = [Outcome(n, plain.get(n), shimmed.get(n)) for n in names]
    suspects = [o for o in outcomes if o.shimmed is not None and o.plain is None]
    only, order = [], []
    if confirm and suspects:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            alone = {(o.module, mode): pool.submit(_import_chunk, [o.module], mode, shim_dir,
                                                   python, timeout)
                     for o in suspects for mode in (False, True)}
        for o in suspects:
            plain_alone = alone[(o.module, False)].result()[o.module]
            shim_alone = alone[(o.module, True)].result()[o.module]
            if shim_alone is not None and plain_alone is None:
                only.append(Outcome(o.module, None, shim_alone))
            else:
                order.append(o)
    else:
        only = suspects
    return Report(outcomes, only, order, time.monotonic() - begin)


def _print_report(report: Report, packages) -> None:
    c = report.counts()
    print(f"{', '.join(packages)}: {c['modules']} modules in {report.seconds:.0f} s; "
          f"{c['fail_without_shim']} fail to import without the shim, "
          f"{c['fail_with_shim']} with it; {c['fail_only_with_shim']} only with it")
    for o in report.only_with_shim:
        print(f"  only with the shim: {o.module}: {o.shimmed}")
    for o in report.order_dependent:
        print(f"  not when imported alone in a fresh process: {o.module}: {o.shimmed}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devshim sweep",
        description="Import every module of installed packages with and without the shim; list "
                    "the modules that fail only with it.")
    parser.add_argument("packages", nargs="*", metavar="PACKAGE",
                        help="top-level packages whose modules to import (e.g. torch)")
    parser.add_argument("--module", action="append", default=[], metavar="NAME",
                        help="import this module too (repeatable); with no PACKAGE, only these")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2,
                        help="child processes at once (default: the number of cores)")
    parser.add_argument("--chunk", type=int, default=300,
                        help="modules given to one child process (default 300)")
    parser.add_argument("--together", action="store_true",
                        help="import a child's modules one after another in it, not each alone "
                             "in a fork: faster, but blind to a module that fails alone and not "
                             "after another one (the only way where there is no fork)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds one import may take before its process is killed")
    parser.add_argument("--shim-dir", default=SHIM_DIR,
                        help="the folder with devshim's sitecustomize.py (default: this one's)")
    parser.add_argument("--json", action="store_true", help="the report as JSON")
    args = parser.parse_args(argv)
    if not args.packages and not args.module:
        parser.error("give a PACKAGE or --module")
    if args.jobs < 1 or args.chunk < 1 or args.timeout <= 0:
        parser.error("--jobs and --chunk must be at least 1, --timeout positive")
    if not os.path.isfile(os.path.join(args.shim_dir, "sitecustomize.py")):
        parser.error(f"--shim-dir {args.shim_dir}: no sitecustomize.py there")
    names = list(args.module)
    for package in args.packages:
        try:
            names += modules_of(package)
        except (ValueError, ImportError) as e:
            parser.error(str(e))
    report = sweep(names, jobs=args.jobs, chunk=args.chunk, shim_dir=args.shim_dir,
                   timeout=args.timeout, alone=CAN_FORK and not args.together)
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        _print_report(report, args.packages or ["modules"])
    return 1 if report.only_with_shim else 0
