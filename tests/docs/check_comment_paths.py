"""Every path of this repository that a comment names exists: a file moved, split or removed
without the comments that point at it fails ctest's comment_paths_exist. Comments are C++'s,
JavaScript's and CSS's `//` and `/* */`, and `#` of Python, shell and CMake, with Python's
docstrings. A path is a word starting with one of the repository's top folders (`runner/`,
`parsers/`, `reports/`, `shim/`, `bench/`, `cmake/`, `fuzz/`, `docs/`, and `tests/` followed by
one of its own folders: `tests/test_x.py` of a suite under test is an example, not this tree's);
`{h,cpp}` is expanded, a build target (`fuzz/report_fuzz`) is the name of its source, and a word
with a placeholder (`*`, `<`, `X`, `N`) is left alone. A comment
may not name the design notes kept outside the repository (`shared/`) either.

    python tests/docs/check_comment_paths.py SOURCE_DIR
"""
import pathlib
import re
import subprocess
import sys

TOP = ("runner", "parsers", "reports", "shim", "bench", "cmake", "fuzz", "docs", "tests")
SOURCES = (".h", ".cpp", ".py", ".sh", ".cmake", ".js", ".mjs", ".css")
SLASH_COMMENTS = (".h", ".cpp", ".js", ".mjs", ".css")
PATH = re.compile(r"(?<![\w./@-])((?:%s)/[\w./{},*<>-]*[\w}/])" % "|".join(TOP))
PLACEHOLDER = re.compile(r"[*<>]|(^|/)(X|N|NAME|FILE)(\.|/|$)")
SLASH = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
HASH = re.compile(r"#[^\n]*")
DOCSTRING = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.S)


def tracked(root: pathlib.Path) -> list[pathlib.Path]:
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout
    return [root / line for line in out.splitlines()
            if line.endswith(SOURCES) or line.endswith("CMakeLists.txt")]


def comments(path: pathlib.Path, text: str) -> list[tuple[int, str]]:
    """(line, text) of each comment of a file."""
    found = []
    if path.suffix in SLASH_COMMENTS:
        pattern_list = [SLASH]
    elif path.suffix == ".py":
        pattern_list = [HASH, DOCSTRING]
    else:
        pattern_list = [HASH]
    for pattern in pattern_list:
        for m in pattern.finditer(text):
            found.append((text.count("\n", 0, m.start()) + 1, m.group(0)))
    return found


def expand(word: str) -> list[str]:
    m = re.fullmatch(r"(.*)\{([^}]*)\}(.*)", word)
    if not m:
        return [word]
    return [m.group(1) + alt.strip() + m.group(3) for alt in m.group(2).split(",")]


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    test_folders = {p.name for p in (root / "tests").iterdir() if p.is_dir()}
    problems = []
    for path in tracked(root):
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        rel = path.relative_to(root)
        if rel == pathlib.Path("tests/docs/check_comment_paths.py"):
            continue
        for line, comment in comments(path, text):
            if "shared/" in comment and re.search(r"\bshared/[A-Z]", comment):
                problems.append(f"{rel}:{line}: names a design note outside the repository")
            for word in PATH.findall(comment):
                word = word.rstrip(".,;:)")
                if PLACEHOLDER.search(word):
                    continue
                parts = word.split("/")
                if parts[0] == "tests" and (len(parts) < 2 or parts[1] not in test_folders):
                    continue
                for candidate in expand(word):
                    # A build target (fuzz/report_fuzz, bench/site_bench) is its source's name.
                    target = "." not in candidate.rsplit("/", 1)[-1] and any(
                        (root / candidate).parent.glob((root / candidate).name + ".*"))
                    if not (root / candidate).exists() and not target:
                        problems.append(f"{rel}:{line}: {candidate} does not exist")
    for p in problems:
        print(p)
    print(f"{len(problems)} comment path(s) that do not exist" if problems
          else "every path a comment names exists")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
