"""docs/architecture.md's module maps name every source file of the folders they map, and only
files that exist: a file added, moved or removed without its row fails ctest's module_map_matches.

    python tests/docs/check_module_map.py SOURCE_DIR

A map is a section headed "## Module map of `FOLDER/`", optionally split into subsections headed
"### `FOLDER/SUB/`: ..." (rows then name files of SUB) or "### `FOLDER/FILE`" (the heading names
the file). A row's first cell names files in backticks: `name.h`, `name.{h,cpp}`, or `sub/` for a
whole folder.
"""
import pathlib
import re
import sys

MAP_HEADING = re.compile(r"^## Module map of `([^`]+/)`", re.M)
SUB_HEADING = re.compile(r"^### `([^`]+)`")
MAPPED_SUFFIXES = (".h", ".cpp")
MAPPED_NAMES = ("CMakeLists.txt",)


def expand(name: str) -> list[str]:
    """`store.{h,cpp}` -> store.h, store.cpp; anything else as is."""
    m = re.fullmatch(r"(.*)\{([^}]*)\}(.*)", name)
    if not m:
        return [name]
    return [m.group(1) + alt.strip() + m.group(3) for alt in m.group(2).split(",")]


def mapped_entries(text: str) -> dict[str, list[tuple[str, int]]]:
    """Each mapped folder -> the paths (relative to the repository) its map names, with the
    line of architecture.md that names each."""
    lines = text.split("\n")
    maps: dict[str, list[tuple[str, int]]] = {}
    folder = None  # the mapped folder of the current section
    base = None  # where the current rows' names are relative to
    for number, line in enumerate(lines, start=1):
        if line.startswith("## "):
            m = MAP_HEADING.match(line)
            folder = m.group(1) if m else None
            base = folder
            if folder:
                maps.setdefault(folder, [])
            continue
        if folder is None:
            continue
        sub = SUB_HEADING.match(line)
        if sub:
            named = sub.group(1)
            if named.endswith("/"):
                base = named
            else:  # the heading names one file
                base = None
                maps[folder].append((named, number))
            continue
        if base is None or not line.startswith("| `"):
            continue
        first_cell = line.split("|")[1]
        for name in re.findall(r"`([^`]+)`", first_cell):
            for path in expand(name):
                maps[folder].append((base + path, number))
    return maps


def main(root: pathlib.Path) -> int:
    doc = root / "docs" / "architecture.md"
    maps = mapped_entries(doc.read_text())
    if not maps:
        print(f"{doc}: no '## Module map of `FOLDER/`' section", file=sys.stderr)
        return 1
    errors = []
    for folder, entries in sorted(maps.items()):
        covered_files = set()
        covered_dirs = []
        for path, line in entries:
            target = root / path
            if path.endswith("/"):
                if not target.is_dir():
                    errors.append(f"docs/architecture.md:{line}: {path}: no such folder")
                covered_dirs.append(path)
            else:
                if not target.is_file():
                    errors.append(f"docs/architecture.md:{line}: {path}: no such file")
                covered_files.add(path)
        for source in sorted((root / folder).rglob("*")):
            if not source.is_file():
                continue
            if not (source.suffix in MAPPED_SUFFIXES or source.name in MAPPED_NAMES):
                continue
            rel = source.relative_to(root).as_posix()
            if rel in covered_files or any(rel.startswith(d) for d in covered_dirs):
                continue
            errors.append(f"{rel}: no row in docs/architecture.md's module map of {folder}")
    for e in errors:
        print(e, file=sys.stderr)
    if not errors:
        count = sum(len(e) for e in maps.values())
        print(f"module maps of {', '.join(sorted(maps))}: {count} entries, every file mapped")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(pathlib.Path(sys.argv[1])))
