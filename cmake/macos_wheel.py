#!/usr/bin/env python3
"""Builds devshim's macOS arm64 wheel on Linux, with the cross toolchain of the macOS check
(cmake/macos_cross_check.py: Zig's clang, libc++ and macOS headers), and checks it with a Mach-O
reader (macholib, pinned in requirements-dev.txt). docs/install.md#the-macos-wheel says what it
checks and what only a Mac can.

    python cmake/macos_wheel.py SOURCE_DIR BUILD_DIR --template WHEEL|FOLDER --out DIR
                                [--release] [--jobs N]

- The runner: the product's translation units, as the check compiles them for aarch64-macos (by
  default the check's own objects, BUILD_DIR/macos-cross/aarch64-macos: -O0, compiled again only
  when something changed; --release: -O2, in BUILD_DIR/macos-cross/release-aarch64-macos), linked
  for macOS 14 (torch's wheels' minimum).
- devshim-probe: shim/cpp compiled against the headers of torch's own macOS wheel (fetched once
  with `pip download --platform macosx_14_0_arm64`, checked against its SHA-256) and linked against
  that wheel's LibTorch (libtorch, libtorch_cpu, libc10: @rpath/ names), with one LC_RPATH per
  CPython the wheel serves, @loader_path/../lib/pythonX.Y/site-packages/torch/lib: the venv's
  torch, as the Linux RUNPATH has it (cmake/install.cmake).
- The wheel: WHEEL (any devshim wheel of this version, cmake/build_wheel.sh's) with those two
  executables in place of its own, tagged py3-none-macosx_14_0_arm64, its RECORD written again.
  Everything else in it (the shim, the warm-start server, the devshim package, the metadata) is the
  same on every platform.

Checked in the wheel made: its tag and files; each executable's Mach-O header (64-bit, arm64,
MH_EXECUTE), LC_BUILD_VERSION (macOS, minimum 14.0), an ad-hoc code signature (LC_CODE_SIGNATURE:
arm64 macOS runs no unsigned program), its LC_LOAD_DYLIB (the runner: the system's libraries only;
the probe: those and @rpath/ LibTorch) and the probe's LC_RPATH. It prints the wheel's path as its
last line. Exit status 0; 1 when a compile, the link or a check failed; 2 when a tool or package
is missing.
"""
from __future__ import annotations

import argparse
import base64
import concurrent.futures
import csv
import hashlib
import io
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import macos_cross_check as cross  # noqa: E402  (beside this file)

TARGET = "aarch64-macos"
# macOS 14: the minimum of torch's own macOS arm64 wheels (macosx_14_0_arm64), as the check links
# its runner (one libc++ built by Zig for both).
LINK_TARGET = f"{cross.LINK_TARGET}.{cross.LINK_MINIMUM}"
MINIMUM_MACOS = tuple(int(part) for part in cross.LINK_MINIMUM.split("."))
PLATFORM_TAG = "macosx_14_0_arm64"
# The CPython versions whose venv's torch the probe finds: cmake/install.cmake's
# DEVSHIM_WHEEL_PYTHONS.
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
# torch's macOS wheel whose LibTorch the probe links: the build requirement of pyproject.toml.
TORCH_WHEEL = cross.Dependency(
    "torch-2.13.0-cp311-cp311-macosx_14_0_arm64.whl",
    [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
     "--platform", "macosx_14_0_arm64", "--python-version", "3.11", "torch==2.13.0",
     "-d", "{dest}"],
    "e76f9bcecc52b8ff711239a2f7547d5353df95878ab232f0773c1d95928b92f8",
    {},
)
TORCH_LIBRARIES = ("libtorch.dylib", "libtorch_cpu.dylib", "libc10.dylib")
EXECUTABLES = ("runner", "devshim-probe")
# <mach-o/machine.h>'s CPU_TYPE_ARM64 (CPU_TYPE_ARM | CPU_ARCH_ABI64), which macholib's mach_o
# names only in its CPU_TYPE_NAMES table.
CPU_TYPE_ARM64 = 0x0100000C
# What an executable may load besides LibTorch: macOS's own libraries.
SYSTEM_LIBRARY = re.compile(r"^(/usr/lib/|/System/Library/)")


class Failed(Exception):
    """A compile, the link or a check failed (exit 1)."""


def torch_for_macos(deps: pathlib.Path) -> pathlib.Path:
    """torch's macOS wheel's include/ and LibTorch, taken out once into deps/torch-macos."""
    out = deps / "torch-macos"
    stamp = out / ".sha256"
    if stamp.is_file() and stamp.read_text() == TORCH_WHEEL.sha256:
        return out
    downloads = deps / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    archive = downloads / TORCH_WHEEL.name
    if not archive.exists():
        cmd = [part.replace("{dest}", str(downloads)) for part in TORCH_WHEEL.fetch]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not archive.exists():
            raise cross.Missing(f"cannot fetch {TORCH_WHEEL.name}: {' '.join(cmd)}\n"
                                f"{r.stdout}{r.stderr}")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != TORCH_WHEEL.sha256:
        archive.unlink()
        raise cross.Missing(f"{TORCH_WHEEL.name}: SHA-256 {digest}, expected {TORCH_WHEEL.sha256}")
    wanted = {f"torch/lib/{name}" for name in TORCH_LIBRARIES}
    with zipfile.ZipFile(archive) as wheel:
        for member in wheel.namelist():
            if member.startswith("torch/include/") or member in wanted:
                wheel.extract(member, out)
    stamp.write_text(TORCH_WHEEL.sha256)
    return out


def macos_torch_flags(flags: list[str], torch: pathlib.Path) -> list[str]:
    """One compile's flags with the Linux torch's include folders made the macOS wheel's."""
    out = []
    for flag in flags:
        m = re.match(r"^(-I|-isystem)?(.*/torch/include)(/.*)?$", flag)
        out.append(f"{m.group(1) or ''}{torch / 'torch' / 'include'}{m.group(3) or ''}"
                   if m else flag)
    return out


def compile_all(zig, jobs, env, threads) -> None:
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        futures = [pool.submit(cross.compile_one, zig, TARGET, u, f, o, env) for u, f, o in jobs]
        for future in concurrent.futures.as_completed(futures):
            unit, _target, _cached, error = future.result()
            if error is not None:
                failures.append(f"{unit}:\n{error}")
    if failures:
        raise Failed("does not compile for macOS:\n" + "\n\n".join(sorted(failures)))


def link(zig, output: pathlib.Path, objects: list[pathlib.Path], extra: list[str], env) -> None:
    if output.exists() and output.stat().st_mtime >= max(o.stat().st_mtime for o in objects):
        return
    cmd = zig + ["c++", "-target", LINK_TARGET, "-o", str(output), *map(str, objects), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        output.unlink(missing_ok=True)
        raise Failed(f"{output.name} does not link for {LINK_TARGET}:\n{r.stdout}{r.stderr}")


def build_executables(source, build, work, release, threads) -> dict[str, pathlib.Path]:
    zig = cross.zig_command(source)
    cross.fetch_dependencies(work / "deps")
    include = cross.header_folder(work, work / "deps")
    torch = torch_for_macos((work / "deps").resolve())
    env = dict(os.environ, ZIG_GLOBAL_CACHE_DIR=str(work / "zig-cache"),
               ZIG_LOCAL_CACHE_DIR=str(work / "zig-cache"))
    flags = cross.MACOS_FLAGS + ["-isystem", str(include)]
    if release:
        flags = ["-O2" if f == "-O0" else f for f in flags]
    runner_dir = work / ("release-" + TARGET if release else TARGET)
    probe_dir = work / ("release-probe-" + TARGET if release else "probe-" + TARGET)
    runner_dir.mkdir(parents=True, exist_ok=True)
    probe_dir.mkdir(parents=True, exist_ok=True)
    shim = source / "shim"
    runner_objects, probe_objects, jobs = [], [], []
    for unit, own in cross.translation_units(source, build).items():
        if unit.is_relative_to(shim):
            obj = cross.object_path(probe_dir, source, build, unit)
            probe_objects.append(obj)
            jobs.append((unit, macos_torch_flags(own, torch) + flags, obj))
        else:
            obj = cross.object_path(runner_dir, source, build, unit)
            runner_objects.append(obj)
            jobs.append((unit, own + flags, obj))
    sqlite = cross.sqlite_object(work, TARGET)
    sqlite.parent.mkdir(parents=True, exist_ok=True)
    jobs.append(((work / "deps").resolve() / "src" / "sqlite3.c",
                 ["-O1", "-g0", "-w", "-DSQLITE_OMIT_LOAD_EXTENSION"], sqlite))
    runner_objects.append(sqlite)
    compile_all(zig, jobs, env, threads)

    out = work / ("release-wheel" if release else "wheel")
    out.mkdir(exist_ok=True)
    runner = out / "runner"
    link(zig, runner, runner_objects, ["-s"], env)
    probe = out / "devshim-probe"
    lib = torch / "torch" / "lib"
    rpaths = [f"-Wl,-rpath,@loader_path/../lib/python{v}/site-packages/torch/lib"
              for v in PYTHONS]
    link(zig, probe, probe_objects,
         ["-s", f"-L{lib}", "-ltorch", "-ltorch_cpu", "-lc10", *rpaths], env)
    return {"runner": runner, "devshim-probe": probe}


def record_line(name: str, data: bytes) -> list[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def make_wheel(template: pathlib.Path, executables: dict[str, pathlib.Path],
               out: pathlib.Path) -> pathlib.Path:
    """template with the executables replaced, tagged for macOS arm64, its RECORD written again."""
    m = re.fullmatch(r"(devshim-[^-]+)-py3-none-[^-]+\.whl", template.name)
    if not m:
        raise Failed(f"{template.name} is not a py3-none devshim wheel")
    stem = m.group(1)
    data_scripts = f"{stem}.data/scripts/"
    dist_info = f"{stem}.dist-info/"
    wheel = out / f"{stem}-py3-none-{PLATFORM_TAG}.whl"
    out.mkdir(parents=True, exist_ok=True)
    records = []
    with zipfile.ZipFile(template) as src, \
            zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as dst:
        names = src.namelist()
        for name in EXECUTABLES:
            if data_scripts + name not in names:
                raise Failed(f"{template.name} has no {data_scripts + name}")
        for info in src.infolist():
            name = info.filename
            if name == dist_info + "RECORD":
                continue
            if name.endswith((".so", ".dylib")) or ".libs/" in name:
                raise Failed(f"{template.name} carries a library of its platform: {name}")
            data = src.read(name)
            if name.startswith(data_scripts) and name[len(data_scripts):] in EXECUTABLES:
                data = executables[name[len(data_scripts):]].read_bytes()
            elif name == dist_info + "WHEEL":
                data = re.sub(rb"(?m)^Tag: .*$", f"Tag: py3-none-{PLATFORM_TAG}".encode(), data)
            new = zipfile.ZipInfo(name, date_time=info.date_time)
            new.external_attr = info.external_attr
            new.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(new, data)
            records.append(record_line(name, data))
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows(records + [[dist_info + "RECORD", "", ""]])
        dst.writestr(dist_info + "RECORD", text.getvalue())
    return wheel


def load_commands(path: pathlib.Path) -> dict:
    """What a Mach-O executable says of itself, read with macholib."""
    from macholib import mach_o
    from macholib.MachO import MachO

    try:
        headers = MachO(str(path)).headers
    except (ValueError, OSError) as e:  # macholib's word for a file that is no Mach-O
        return {"error": f"not a Mach-O file ({e})"}
    if len(headers) != 1:
        return {"error": f"{len(headers)} architectures (a fat file), expected one"}
    header = headers[0]
    found = {"magic": header.header.magic, "cputype": header.header.cputype,
             "filetype": header.header.filetype, "dylibs": [], "rpaths": [],
             "minos": None, "platform": None, "signed": False}
    for command, body, data in header.commands:
        kind = mach_o.LC_NAMES.get(command.cmd, command.cmd)
        if kind in ("LC_LOAD_DYLIB", "LC_LOAD_WEAK_DYLIB", "LC_REEXPORT_DYLIB"):
            found["dylibs"].append(data.rstrip(b"\0").decode())
        elif kind == "LC_RPATH":
            found["rpaths"].append(data.rstrip(b"\0").decode())
        elif kind == "LC_BUILD_VERSION":
            found["platform"] = body.platform
            found["minos"] = (body.minos >> 16, (body.minos >> 8) & 0xFF)
        elif kind == "LC_CODE_SIGNATURE":
            found["signed"] = True
    return found


def check_wheel(wheel: pathlib.Path, template: pathlib.Path) -> list[str]:
    """What is wrong with the macOS wheel; empty when nothing is."""
    from macholib import mach_o

    problems = []
    with zipfile.ZipFile(wheel) as made, zipfile.ZipFile(template) as src:
        if sorted(made.namelist()) != sorted(src.namelist()):
            problems.append("its files are not the template's")
        tag = re.search(rb"(?m)^Tag: (.*)$", made.read(next(
            n for n in made.namelist() if n.endswith(".dist-info/WHEEL"))))
        if not tag or tag.group(1).decode().strip() != f"py3-none-{PLATFORM_TAG}":
            problems.append(f"WHEEL's tag is {tag and tag.group(1)}")
        with tempfile.TemporaryDirectory() as folder:
            for name in EXECUTABLES:
                member = next(n for n in made.namelist() if n.endswith(f".data/scripts/{name}"))
                path = pathlib.Path(folder) / name
                path.write_bytes(made.read(member))
                if (made.getinfo(member).external_attr >> 16) & 0o111 == 0:
                    problems.append(f"{name} is not executable in the wheel")
                found = load_commands(path)
                if "error" in found:
                    problems.append(f"{name}: {found['error']}")
                    continue
                if (found["magic"], found["cputype"], found["filetype"]) != \
                        (mach_o.MH_MAGIC_64, CPU_TYPE_ARM64, mach_o.MH_EXECUTE):
                    problems.append(f"{name}: not a 64-bit arm64 Mach-O executable: {found}")
                if found["platform"] != 1 or found["minos"] != MINIMUM_MACOS:  # 1: PLATFORM_MACOS
                    problems.append(f"{name}: LC_BUILD_VERSION platform {found['platform']}, "
                                    f"minimum {found['minos']}, expected macOS 14.0")
                if not found["signed"]:
                    problems.append(f"{name}: no LC_CODE_SIGNATURE")
                libtorch = sorted(d for d in found["dylibs"] if not SYSTEM_LIBRARY.match(d))
                expected = [] if name == "runner" else \
                    sorted(f"@rpath/{lib}" for lib in TORCH_LIBRARIES)
                if libtorch != expected:
                    problems.append(f"{name} loads {libtorch} besides the system's, expected "
                                    f"{expected}")
                rpaths = [] if name == "runner" else \
                    [f"@loader_path/../lib/python{v}/site-packages/torch/lib" for v in PYTHONS]
                if found["rpaths"] != rpaths:
                    problems.append(f"{name}: LC_RPATH {found['rpaths']}, expected {rpaths}")
                print(f"macos_wheel: {name}: Mach-O arm64 executable, macOS {found['minos'][0]}."
                      f"{found['minos'][1]}, signed; loads {', '.join(found['dylibs'])}"
                      + (f"; rpaths {', '.join(found['rpaths'])}" if found["rpaths"] else ""),
                      file=sys.stderr)
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=pathlib.Path)
    parser.add_argument("build", type=pathlib.Path)
    parser.add_argument("--template", type=pathlib.Path, required=True,
                        help="a devshim wheel of this version (cmake/build_wheel.sh's), or the "
                             "folder that holds it alone")
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--release", action="store_true", help="-O2 objects of their own")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    source, build = args.source.resolve(), args.build.resolve()
    started = time.monotonic()
    template = args.template.resolve()
    if template.is_dir():
        found = sorted(template.glob("devshim-*-py3-none-manylinux*.whl"))
        if len(found) != 1:
            print(f"macos_wheel: expected one devshim wheel in {template}: {found}",
                  file=sys.stderr)
            return 2
        template = found[0]
    try:
        executables = build_executables(source, build, build / "macos-cross", args.release,
                                        args.jobs)
        for old in args.out.glob(f"devshim-*-{PLATFORM_TAG}.whl"):
            old.unlink()
        wheel = make_wheel(template, executables, args.out.resolve())
        problems = check_wheel(wheel, template)
    except cross.Missing as e:
        print(f"macos_wheel: {e}", file=sys.stderr)
        return 2
    except Failed as e:
        print(f"macos_wheel: {e}", file=sys.stderr)
        return 1
    for problem in problems:
        print(f"macos_wheel: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"macos_wheel: {wheel.name}, {wheel.stat().st_size // 1024} KiB, checked; "
          f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
