"""The macOS cross-check (cmake/macos_cross_check.py) checked on a small tree of its own: a file
that calls what only Linux has fails it, named with the compiler's error, for both targets; a
*_linux.cpp file is replaced by its *_darwin.cpp sibling; a clean tree links into a Mach-O arm64
executable. ctest's macos_cross_check_test (label portability).

    python tests/portability/macos_cross_check_test.py SOURCE_DIR BUILD_DIR

BUILD_DIR's macos-cross/deps (the packages the check fetches, SQLite's object) and Zig's cache
(its libc++ and system libraries built for macOS) are shared, not made again.
"""

import json
import pathlib
import subprocess
import sys
import tempfile

SOURCE = pathlib.Path(sys.argv[1]).resolve()
BUILD = pathlib.Path(sys.argv[2]).resolve()
CHECK = SOURCE / "cmake" / "macos_cross_check.py"

FILES = {
    "runner/cli/main.cpp": "int portable();\nint main() { return portable(); }\n",
    "runner/engine/portable_linux.cpp": (
        "#include <sys/prctl.h>\nint portable() { return prctl(PR_SET_CHILD_SUBREAPER, 1); }\n"),
    "runner/engine/portable_darwin.cpp": "int portable() { return 0; }\n",
    "runner/engine/linux_only.cpp": "#include <sys/prctl.h>\nint linux_only() { return 1; }\n",
}


def tree(root: pathlib.Path, files: list[str]) -> tuple[pathlib.Path, pathlib.Path]:
    source, build = root / "src", root / "build"
    for rel, text in FILES.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text)
    (source / "requirements-dev.txt").write_text((SOURCE / "requirements-dev.txt").read_text())
    (build / "macos-cross").mkdir(parents=True)
    for shared in ("deps", "zig-cache"):  # fetched packages, Zig's own libraries for macOS
        (build / "macos-cross" / shared).symlink_to(BUILD / "macos-cross" / shared)
    commands = [{"directory": str(build), "file": str(source / f),
                 "command": f"c++ -DDEVSHIM_PLATFORM_LINUX -I{source} -c {source / f}"}
                for f in files]
    (build / "compile_commands.json").write_text(json.dumps(commands))
    return source, build


def check(source: pathlib.Path, build: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), str(source), str(build), "--jobs", "2"],
                          capture_output=True, text=True, timeout=1200)


def main() -> int:
    if not (BUILD / "macos-cross" / "deps" / "src" / "sqlite3.c").exists():
        # The check itself fetches them (ctest runs macos_cross_check first: DEPENDS).
        print(f"no {BUILD / 'macos-cross' / 'deps'}: run ctest -R '^macos_cross_check$' first")
        return 1
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        source, build = tree(pathlib.Path(tmp) / "bad", [
            "runner/cli/main.cpp", "runner/engine/portable_linux.cpp",
            "runner/engine/linux_only.cpp"])
        r = check(source, build)
        out = r.stdout + r.stderr
        if r.returncode != 1:
            failures.append(f"Linux-only code: exit {r.returncode}, expected 1\n{out}")
        linux_only = source / "runner/engine/linux_only.cpp"
        for target in ("aarch64-macos", "x86_64-macos"):
            if f"does not compile for {target}: {linux_only}" not in out:
                failures.append(f"linux_only.cpp not named for {target}:\n{out}")
        if "sys/prctl.h' file not found" not in out:
            failures.append(f"the compiler's error not shown:\n{out}")
        if "portable_linux.cpp" in out:
            failures.append(f"portable_linux.cpp was compiled, not portable_darwin.cpp:\n{out}")

        source, build = tree(pathlib.Path(tmp) / "good", [
            "runner/cli/main.cpp", "runner/engine/portable_linux.cpp"])
        r = check(source, build)
        out = r.stdout + r.stderr
        if r.returncode != 0 or "runner linked: Mach-O arm64 executable" not in out:
            failures.append(f"a portable tree: exit {r.returncode}, expected 0 and a link\n{out}")
    for failure in failures:
        print(f"FAIL: {failure}\n")
    print(f"macos_cross_check_test: {len(failures)} failure(s)" if failures
          else "macos_cross_check_test: both trees as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
