#!/usr/bin/env python3
"""The checks of .clang-tidy, as errors, on runner/, parsers/, reports/ and shim/cpp/ (ctest's
clang_tidy).

    clang_tidy_check.py --clang-tidy PATH --build BUILD_DIR --root SOURCE_DIR [--all] [--jobs N]

Which files: the translation units of runner/, parsers/, reports/ and shim/cpp/ in BUILD_DIR's
compile_commands.json that are new code, i.e. that differ from the base revision
$DEVSHIM_TIDY_BASE (default HEAD~1: the commit under test, plus whatever is not committed yet,
untracked files included), or that include such a file (directly or through other project
headers). Every file when --all is given, when DEVSHIM_TIDY_BASE=all, when .clang-tidy changed
(new checks apply to old code too), or when there is no git history to compare with. A full run
takes about 7 minutes on 2 cores (about 15 s of CPU per file); the whole tree was clean when this
check was introduced, so checking what changed keeps it clean. A CI that tests several commits at
once sets DEVSHIM_TIDY_BASE to the last commit it tested (or to the branch it merges into).

clang-tidy before 15 cannot parse std::source_location with libstdc++ 12 (no
__builtin_source_location): with such a clang-tidy, the translation units that include a project
file naming std::source_location are skipped, and the check says which.

Any diagnostic fails the check: .clang-tidy makes every warning an error, and clang's own errors
(clang-diagnostic-error) count too. Exit status: 0 clean, 1 findings, 2 usage or setup error.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

CHECKED_DIRS = ("runner", "parsers", "reports", "shim/cpp")
INCLUDE_DIRS = ("", "shim/cpp/include")  # roots of "..." includes, relative to the source root
QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def git(root, *args):
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout


def changed_files(root, base):
    """Paths (relative to root) that differ between base and the working tree; None: unknown."""
    try:
        git(root, "rev-parse", "--verify", "--quiet", base + "^{commit}")
        diff = git(root, "diff", "--name-only", "--no-renames", base, "--")
        untracked = git(root, "ls-files", "--others", "--exclude-standard")
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None
    return {line for line in (diff + untracked).splitlines() if line}


def include_graph(root):
    """Project file (relative path) -> the project files it includes with "..."."""
    graph = {}
    for top in CHECKED_DIRS:
        for path in (root / top).rglob("*"):
            if path.suffix not in (".h", ".hpp", ".cpp", ".ipp") or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            deps = set()
            for name in QUOTED_INCLUDE.findall(path.read_text(errors="replace")):
                for base in (path.parent, *(root / d for d in INCLUDE_DIRS)):
                    candidate = (base / name).resolve()
                    if candidate.is_file() and root in candidate.parents:
                        deps.add(candidate.relative_to(root).as_posix())
                        break
            graph[rel] = deps
    return graph


def checked(rel):
    return any(rel == d or rel.startswith(d + "/") for d in CHECKED_DIRS)


def clang_tidy_major(clang_tidy):
    """The major version of clang_tidy ("LLVM version 14.0.6"), or None."""
    try:
        out = subprocess.run([clang_tidy, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return None
    m = re.search(r"version (\d+)\.", out)
    return int(m.group(1)) if m else None


def depends_on(tu, changed, graph):
    seen, stack = set(), [tu]
    while stack:
        f = stack.pop()
        if f in changed:
            return True
        if f not in seen:
            seen.add(f)
            stack.extend(graph.get(f, ()))
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clang-tidy", required=True)
    ap.add_argument("--build", required=True, type=Path, help="folder with compile_commands.json")
    ap.add_argument("--root", required=True, type=Path, help="the source folder")
    ap.add_argument("--all", action="store_true", help="every file, whatever changed")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    root = args.root.resolve()

    db_path = args.build / "compile_commands.json"
    try:
        db = json.loads(db_path.read_text())
    except OSError as e:
        print(f"clang_tidy_check: cannot read {db_path}: {e}", file=sys.stderr)
        return 2
    units = sorted({Path(e["file"]).resolve().relative_to(root).as_posix()
                    for e in db
                    if Path(e["file"]).resolve().is_relative_to(root) and
                    checked(Path(e["file"]).resolve().relative_to(root).as_posix())})
    if not units:
        print(f"clang_tidy_check: no file of {', '.join(CHECKED_DIRS)} in {db_path}",
              file=sys.stderr)
        return 2

    graph = include_graph(root)
    skipped = []
    major = clang_tidy_major(args.clang_tidy)
    if major is not None and major < 15:
        uses = {f for f in graph
                if "std::source_location" in (root / f).read_text(errors="replace")}
        skipped = [u for u in units if depends_on(u, uses, graph)]
        units = [u for u in units if u not in skipped]

    base = os.environ.get("DEVSHIM_TIDY_BASE", "HEAD~1")
    why = ""
    if args.all or base == "all":
        selected, why = units, "all files"
    else:
        changed = changed_files(root, base)
        if changed is None:
            selected, why = units, f"all files ({base} is not a revision of a git checkout here)"
        elif ".clang-tidy" in changed:
            selected, why = units, f"all files (.clang-tidy changed since {base})"
        else:
            selected = [u for u in units if depends_on(u, changed, graph)]
            why = f"changed since {base}, or including a changed file"
    print(f"clang-tidy: {len(selected)} of {len(units)} files ({why}), {args.jobs} at a time",
          flush=True)
    if skipped:
        print(f"clang-tidy: not checked, as clang-tidy {major} cannot parse std::source_location: "
              f"{' '.join(skipped)}", flush=True)

    def tidy(unit):
        p = subprocess.run([args.clang_tidy, "-p", str(args.build), "--quiet", str(root / unit)],
                           capture_output=True, text=True)
        # "N warnings generated." counts the diagnostics of system headers, which are not shown.
        summary = r"\d+ (warnings?|errors?)( and \d+ errors?)? generated\."
        out = "\n".join(line for line in (p.stdout + p.stderr).splitlines()
                        if not re.fullmatch(summary, line.strip()) and line.strip())
        return unit, p.returncode, out

    start = time.monotonic()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for unit, rc, out in pool.map(tidy, selected):
            if rc != 0 or out:
                failed.append(unit)
                print(f"--- {unit} (exit {rc})\n{out}", flush=True)
    took = time.monotonic() - start
    if failed:
        print(f"clang-tidy: findings in {len(failed)} of {len(selected)} files ({took:.0f} s): "
              f"{' '.join(failed)}")
        return 1
    print(f"clang-tidy: {len(selected)} files clean ({took:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
