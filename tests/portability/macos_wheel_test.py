"""The macOS wheel's check (cmake/macos_wheel.py's check_wheel) on wheels made wrong from the one
ctest's macos_wheel built: each fault is named, and the wheel as built passes. ctest's
macos_wheel_test (label portability), after macos_wheel.

    python tests/portability/macos_wheel_test.py SOURCE_DIR MACOS_WHEEL_DIR TEMPLATE_DIR
"""

import pathlib
import re
import sys
import tempfile
import zipfile

SOURCE = pathlib.Path(sys.argv[1]).resolve()
sys.path.insert(0, str(SOURCE / "cmake"))
import macos_wheel  # noqa: E402  (cmake/)

[WHEEL] = sorted(pathlib.Path(sys.argv[2]).glob("devshim-*-py3-none-macosx_14_0_arm64.whl"))
[TEMPLATE] = sorted(pathlib.Path(sys.argv[3]).glob("devshim-*-py3-none-manylinux*.whl"))


def altered(out: pathlib.Path, change) -> pathlib.Path:
    """WHEEL copied with change(name, data) -> data applied to each member."""
    with zipfile.ZipFile(WHEEL) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, change(info.filename, src.read(info.filename)))
    return out


def member(name: str) -> bytes:
    with zipfile.ZipFile(WHEEL) as wheel:
        return wheel.read(next(n for n in wheel.namelist() if n.endswith(name)))


def main() -> int:
    failures = []

    def expect(case: str, problems: list, pattern: str) -> None:
        if not any(re.search(pattern, p) for p in problems):
            failures.append(f"{case}: no problem matches {pattern!r}: {problems}")

    problems = macos_wheel.check_wheel(WHEEL, TEMPLATE)
    if problems:
        failures.append(f"the wheel as built: {problems}")
    probe = member(".data/scripts/devshim-probe")
    linux_runner = None
    with zipfile.ZipFile(TEMPLATE) as template:
        linux_runner = template.read(next(n for n in template.namelist()
                                          if n.endswith(".data/scripts/runner")))
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        # The probe in the runner's place: it loads LibTorch and has rpaths.
        swapped = altered(folder / "swapped.whl", lambda name, data:
                          probe if name.endswith(".data/scripts/runner") else data)
        problems = macos_wheel.check_wheel(swapped, TEMPLATE)
        expect("probe as runner", problems, r"^runner loads \['@rpath/libc10\.dylib'")
        expect("probe as runner", problems, r"^runner: LC_RPATH \['@loader_path/")
        # Linux's runner left in: not Mach-O.
        linux = altered(folder / "linux.whl", lambda name, data:
                        linux_runner if name.endswith(".data/scripts/runner") else data)
        expect("Linux runner", macos_wheel.check_wheel(linux, TEMPLATE), r"^runner: ")
        # The tag of another platform.
        tagged = altered(folder / "tagged.whl", lambda name, data:
                         data.replace(b"macosx_14_0_arm64", b"macosx_11_0_arm64")
                         if name.endswith(".dist-info/WHEEL") else data)
        expect("tag", macos_wheel.check_wheel(tagged, TEMPLATE), r"^WHEEL's tag is")
    for failure in failures:
        print(f"macos_wheel_test: {failure}", file=sys.stderr)
    print(f"macos_wheel_test: 4 wheels checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
