#!/usr/bin/env python3
"""Checks, from this Linux machine, that devshim builds for macOS: every product translation unit
(runner/, parsers/, reports/, shim/cpp/, and the site_assets.cpp and build_info.cpp the build
generates) compiles for aarch64-macos and x86_64-macos with Zig's clang and macOS headers (the
ziglang package, pinned in requirements-dev.txt), and the runner links into a Mach-O executable for
aarch64-macos. ctest's macos_cross_check (label portability) runs it;
docs/architecture.md#portability says what it checks and what it costs.

    python cmake/macos_cross_check.py SOURCE_DIR BUILD_DIR [--jobs N]

The translation units and their own flags (defines, project include folders) are those of
BUILD_DIR/compile_commands.json, the Linux build's: a file named *_linux.cpp is replaced by its
*_darwin.cpp sibling when there is one and left out otherwise (the linux process platform:
runner/engine/process_platform.h). On top of them, for macOS:

- Boost, fmt, nlohmann_json and CLI11: the headers of the Debian packages setup.sh installs, seen
  through a folder of links (never /usr/include itself: its C library headers are Linux's).
  fmt is header-only (FMT_HEADER_ONLY). Boost.Process v2 runs on std::filesystem
  (BOOST_PROCESS_USE_STD_FS) instead of Boost.Filesystem, whose compiled library the Debian
  packages have only for Linux and whose sources they do not ship; Boost 1.81's headers lack three
  includes in that mode, given here with -include.
- pugixml, header-only (PUGIXML_HEADER_ONLY): its source comes from the sdist of the PyPI package
  pugixml (Python bindings that carry pugixml 1.16), since Debian ships only the headers.
- SQLite: the amalgamation (sqlite3.c, sqlite3.h) from the npm package better-sqlite3, which
  carries it; compiled as C.
- LibTorch (shim/cpp): the headers of the torch the build found (the venv's, torch==2.13.0):
  PyPI has no macOS wheel of 2.13.0 (the newest for macOS arm64 is 2.11.0), and the headers of one
  version are the same C++ on every system.

Both packages are fetched once with pip and npm into BUILD_DIR/macos-cross/deps and checked
against their SHA-256. Objects are cached in BUILD_DIR/macos-cross/<target>/ with their depfiles:
a translation unit is compiled again only when its source, a header it includes or its command
changed; the runner is linked again only when an object is newer.

Exit status: 0 when everything compiled and the runner is a Mach-O arm64 executable; 1 with each
failing translation unit's errors otherwise; 2 when the tools are missing (it says which).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import pathlib
import re
import shlex
import struct
import subprocess
import sys
import tarfile
import time

TARGETS = ("aarch64-macos", "x86_64-macos")
LINK_TARGET = "aarch64-macos"
# The runner is linked for macOS 14, the minimum of torch's macOS wheels and of devshim's
# (cmake/macos_wheel.py links for it too): Zig builds its libc++ once per target and minimum
# (about 160 s of CPU on this machine), so in a fresh build folder one minimum is one build.
LINK_MINIMUM = "14.0"
PRODUCT_DIRS = ("runner/", "parsers/", "reports/", "shim/cpp/")
# Debian's headers seen by the macOS compiles, one link each (under /usr/include).
DEBIAN_HEADERS = ("boost", "fmt", "nlohmann", "CLI")
DROPPED_DEFINES = re.compile(
    r"^(DEVSHIM_PLATFORM_LINUX|FMT_SHARED|BOOST_\w+_(DYN_LINK|NO_LIB))(=|$)")
MACOS_FLAGS = [
    "-std=c++20",
    "-O0",
    "-g0",
    "-DFMT_HEADER_ONLY",
    "-DPUGIXML_HEADER_ONLY",
    "-DBOOST_PROCESS_USE_STD_FS",
    # Zig 0.17's headers: libc++'s <float.h> has an include guard, so of clang's <float.h> only
    # the part the first includer asked for is read: INFINITY and NAN (__need_infinity_nan, from
    # macOS's <math.h>) or the limits (DBL_DIG, which pugixml uses). Both parts, read first:
    "-include", "cfloat",
    "-include", "__float_infinity_nan.h",
    # What Boost 1.81's Process v2 headers use without including in BOOST_PROCESS_USE_STD_FS mode.
    "-include", "type_traits",
    "-include", "boost/optional.hpp",
    "-include", "boost/type_traits/remove_pointer.hpp",
    "-w",
]


class Dependency:
    """A package from a registry, the files taken out of it and where they go."""

    def __init__(self, name, fetch, sha256, members):
        self.name = name
        self.fetch = fetch  # command that saves the archive into the folder given as {dest}
        self.sha256 = sha256
        self.members = members  # path in the archive -> path under deps/


DEPENDENCIES = [
    Dependency(
        "pugixml-0.8.0.tar.gz",
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         "pugixml==0.8.0", "-d", "{dest}"],
        "0f05bee514c59f76892f12c5dfc8270a09909f1d7730218540ce3aca3188ae92",
        {
            "pugixml-0.8.0/src/third_party/pugixml/src/pugixml.hpp": "include/pugixml.hpp",
            "pugixml-0.8.0/src/third_party/pugixml/src/pugiconfig.hpp": "include/pugiconfig.hpp",
            "pugixml-0.8.0/src/third_party/pugixml/src/pugixml.cpp": "include/pugixml.cpp",
        },
    ),
    Dependency(
        "better-sqlite3-12.11.1.tgz",
        ["npm", "pack", "better-sqlite3@12.11.1", "--pack-destination", "{dest}"],
        "ebf0ed75a7a59dbcb3b24bbd014ef49d9f15bc328e4adcbf516f2a8fadfa2835",
        {
            "package/deps/sqlite3/sqlite3.h": "include/sqlite3.h",
            "package/deps/sqlite3/sqlite3ext.h": "include/sqlite3ext.h",
            "package/deps/sqlite3/sqlite3.c": "src/sqlite3.c",
        },
    ),
]


class Missing(Exception):
    """A tool or package the check needs is not there (exit 2)."""


def zig_command(source: pathlib.Path) -> list[str]:
    """`python -m ziglang`, checked against the version requirements-dev.txt pins."""
    pin = re.search(r"^ziglang==(\S+)", (source / "requirements-dev.txt").read_text(), re.M)
    if not pin:
        raise Missing("requirements-dev.txt pins no ziglang")
    zig = [sys.executable, "-m", "ziglang"]
    try:
        version = subprocess.run(zig + ["version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise Missing(f"{sys.executable} has no ziglang ({e}): ./setup.sh installs "
                      "requirements-dev.txt") from e
    if version.stdout.strip() != pin.group(1):
        raise Missing(f"ziglang {version.stdout.strip()} is not the pinned {pin.group(1)}: "
                      "./setup.sh installs requirements-dev.txt")
    return zig


def fetch_dependencies(deps_dir: pathlib.Path) -> None:
    """Each registry package once, checked, its files taken out into deps_dir."""
    downloads = deps_dir / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    for dep in DEPENDENCIES:
        targets = [deps_dir / out for out in dep.members.values()]
        if all(t.exists() for t in targets):
            continue
        archive = downloads / dep.name
        if not archive.exists():
            cmd = [part.replace("{dest}", str(downloads)) for part in dep.fetch]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0 or not archive.exists():
                raise Missing(f"cannot fetch {dep.name}: {shlex.join(cmd)}\n{r.stdout}{r.stderr}")
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != dep.sha256:
            archive.unlink()
            raise Missing(f"{dep.name}: SHA-256 {digest}, expected {dep.sha256}")
        with tarfile.open(archive) as tar:
            for member, out in dep.members.items():
                data = tar.extractfile(member)
                if data is None:
                    raise Missing(f"{dep.name} has no {member}")
                (deps_dir / out).parent.mkdir(parents=True, exist_ok=True)
                (deps_dir / out).write_bytes(data.read())


def header_folder(work: pathlib.Path, deps_dir: pathlib.Path) -> pathlib.Path:
    """A folder that shows the Debian headers and the fetched ones, and nothing of glibc."""
    include = work / "include"
    include.mkdir(parents=True, exist_ok=True)
    links = {name: pathlib.Path("/usr/include") / name for name in DEBIAN_HEADERS}
    for header in (deps_dir / "include").iterdir():
        links[header.name] = header
    for name, target in links.items():
        if not target.exists():
            raise Missing(f"no {target}: ./setup.sh installs the Debian packages")
        link = include / name
        if link.is_symlink() and pathlib.Path(os.readlink(link)) == target:
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return include


def own_flags(entry: dict, source: pathlib.Path, build: pathlib.Path) -> list[str]:
    """The defines and project (and LibTorch) include folders of one compile command."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-D") and not DROPPED_DEFINES.match(a[2:]):
            out.append(a)
        elif a in ("-I", "-isystem") and i + 1 < len(args):
            path = args[i + 1]
            if not path.startswith("/usr/"):
                out += [a, path]
            i += 1
        elif a.startswith("-I") and not a[2:].startswith("/usr/"):
            out.append(a)
        i += 1
    return out


def translation_units(source: pathlib.Path, build: pathlib.Path) -> dict[pathlib.Path, list[str]]:
    """Each product source file -> its flags, from the Linux build's compile_commands.json."""
    commands = json.loads((build / "compile_commands.json").read_text())
    units: dict[pathlib.Path, list[str]] = {}
    # What the build writes: the site's embedded assets, and runner --version's build facts.
    generated = {build / "reports" / "site_assets.cpp", build / "runner" / "build_info.cpp"}
    for entry in commands:
        path = pathlib.Path(entry["directory"], entry["file"]).resolve()
        rel = path.relative_to(source).as_posix() if path.is_relative_to(source) else None
        if path not in generated and not (rel and rel.startswith(PRODUCT_DIRS)):
            continue
        if path.name.endswith("_linux.cpp"):
            path = path.with_name(path.name[: -len("_linux.cpp")] + "_darwin.cpp")
            if not path.exists():
                continue
        units.setdefault(path, own_flags(entry, source, build))
    return units


def object_path(out: pathlib.Path, source: pathlib.Path, build: pathlib.Path, unit: pathlib.Path):
    rel = unit.relative_to(build) if unit.is_relative_to(build) else unit.relative_to(source)
    return out / (rel.as_posix().replace("/", "__") + ".o")


def sqlite_object(work: pathlib.Path, target: str) -> pathlib.Path:
    """SQLite's object lies with the dependencies (followed where they are a link to another
    build's): it depends on nothing of devshim."""
    return (work / "deps").resolve() / target / "sqlite3.c.o"


def up_to_date(obj: pathlib.Path, cmd: list[str]) -> bool:
    stamp = obj.with_suffix(".cmd")
    dep = obj.with_suffix(".d")
    if not (obj.exists() and dep.exists() and stamp.exists()):
        return False
    if stamp.read_text() != shlex.join(cmd):
        return False
    built = obj.stat().st_mtime
    text = dep.read_text().replace("\\\n", " ")
    for path in text.split(":", 1)[1].split():
        try:
            if pathlib.Path(path).stat().st_mtime > built:
                return False
        except OSError:
            return False
    return True


def compile_one(zig, target, unit, flags, obj, env):
    """(unit, target, cached, error text or None)."""
    language = ["-x", "c"] if unit.suffix == ".c" else []
    cmd = (zig + (["cc"] if unit.suffix == ".c" else ["c++"]) + ["-target", target] + language
           + flags + ["-MD", "-MF", str(obj.with_suffix(".d")), "-c", str(unit), "-o", str(obj)])
    if up_to_date(obj, cmd):
        return unit, target, True, None
    # The stamp is written back only after a compile that finished: a compile killed half-way
    # leaves an empty object that must not pass for cached (seen after a stopped ctest).
    obj.with_suffix(".cmd").unlink(missing_ok=True)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        obj.unlink(missing_ok=True)
        return unit, target, False, (r.stdout + r.stderr).strip()
    obj.with_suffix(".cmd").write_text(shlex.join(cmd))
    return unit, target, False, None


def mach_o_arm64_executable(path: pathlib.Path) -> bool:
    """64-bit Mach-O (MH_MAGIC_64), CPU_TYPE_ARM64, MH_EXECUTE."""
    with open(path, "rb") as f:
        header = f.read(16)
    if len(header) < 16:
        return False
    magic, cputype, _subtype, filetype = struct.unpack("<IiiI", header)
    return magic == 0xFEEDFACF and cputype == 0x0100000C and filetype == 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=pathlib.Path)
    parser.add_argument("build", type=pathlib.Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    source, build = args.source.resolve(), args.build.resolve()
    work = build / "macos-cross"
    started = time.monotonic()
    try:
        zig = zig_command(source)
        fetch_dependencies(work / "deps")
        include = header_folder(work, work / "deps")
    except Missing as e:
        print(f"macos_cross_check: {e}", file=sys.stderr)
        return 2
    env = dict(os.environ, ZIG_GLOBAL_CACHE_DIR=str(work / "zig-cache"),
               ZIG_LOCAL_CACHE_DIR=str(work / "zig-cache"))
    units = translation_units(source, build)
    sqlite = (work / "deps").resolve() / "src" / "sqlite3.c"
    jobs = []
    for target in TARGETS:
        out = work / target
        out.mkdir(parents=True, exist_ok=True)
        for unit, flags in units.items():
            obj = object_path(out, source, build, unit)
            jobs.append((target, unit, flags + MACOS_FLAGS + ["-isystem", str(include)], obj))
        if target == LINK_TARGET:
            sqlite_object(work, target).parent.mkdir(exist_ok=True)
            jobs.append((target, sqlite, ["-O1", "-g0", "-w", "-DSQLITE_OMIT_LOAD_EXTENSION"],
                         sqlite_object(work, target)))
    failures = []
    cached = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(compile_one, zig, t, u, f, o, env) for t, u, f, o in jobs]
        for future in concurrent.futures.as_completed(futures):
            unit, target, was_cached, error = future.result()
            cached += was_cached
            if error is not None:
                failures.append(f"{target}: {unit}:\n{error}")
    for failure in sorted(failures):
        print(f"macos_cross_check: does not compile for {failure}\n", file=sys.stderr)
    if failures:
        print(f"macos_cross_check: {len(failures)} of {len(jobs)} compiles failed", file=sys.stderr)
        return 1

    # The runner: every object but shim/cpp's (the runner never links LibTorch) and SQLite.
    out = work / LINK_TARGET
    runner = out / "runner"
    objects = [object_path(out, source, build, u) for u in units
               if not u.is_relative_to(source / "shim")]
    objects.append(sqlite_object(work, LINK_TARGET))
    newest = max(o.stat().st_mtime for o in objects)
    if not runner.exists() or runner.stat().st_mtime < newest:
        cmd = zig + ["c++", "-target", f"{LINK_TARGET}.{LINK_MINIMUM}", "-o", str(runner)] + \
            [str(o) for o in objects]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            runner.unlink(missing_ok=True)
            print(f"macos_cross_check: the runner does not link for {LINK_TARGET}:\n"
                  f"{r.stdout}{r.stderr}", file=sys.stderr)
            return 1
    if not mach_o_arm64_executable(runner):
        print(f"macos_cross_check: {runner} is not a Mach-O arm64 executable", file=sys.stderr)
        return 1
    print(f"macos_cross_check: {len(units)} translation units compiled for {', '.join(TARGETS)} "
          f"({len(jobs)} compiles, {cached} from the cache); runner linked: Mach-O arm64 "
          f"executable, {runner.stat().st_size // 1024} KiB ({runner}); "
          f"{time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
