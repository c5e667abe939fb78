"""Code below the command line never writes to the terminal and never reads the process's
environment: the engine reports events to a RunSink (runner/engine/run_events.h) and reads the
Environment value the command line took once (runner/engine/environment.h); renderers return
text. Fails ctest's no_terminal_below_cli on any use, in the C++ of runner/engine,
runner/results, parsers and reports, of

  printf, puts, putchar, vprintf, std::cout, std::cerr, std::clog, stdout, stderr,
  fmt::print/println with a format string first (stdout)                         (the terminal)
  getenv, secure_getenv, setenv, unsetenv, putenv, environ                         (the environment)

Comments and string and character literals (raw strings included: an embedded Python program's
os.environ is its own) are left out before matching. fprintf/fputs to a FILE* of the code's own
(run.log) are not the terminal and are allowed.

    python tests/lint/check_no_terminal_below_cli.py SOURCE_DIR
"""
import pathlib
import re
import sys

LAYERS = ("runner/engine", "runner/results", "parsers", "reports")
FORBIDDEN = re.compile(
    r"(?<![\w.>:])(?:std::)?(?P<name>printf|puts|putchar|vprintf|getenv|secure_getenv|setenv"
    r"|unsetenv|putenv)\s*\("
    r"|(?P<stream>std::(?:cout|cerr|clog))\b"
    r"|(?P<fmt>fmt::print(?:ln)?)\s*\(\s*[\"'(]"
    r"|(?<![\w.>])(?P<file>stdout|stderr|environ)\b")


def code_only(text: str) -> str:
    """text with comments and literals blanked (newlines kept, so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not text[i - 1].isalnum()
                                                                or text[i - 1] in "u8LU"):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren]
            close = text.find(")" + delimiter + '"', open_paren)
            j = n if close < 0 else close + len(delimiter) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def problems(root: pathlib.Path) -> list[str]:
    found = []
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*")):
            if path.suffix not in (".h", ".cpp"):
                continue
            code = code_only(path.read_text(encoding="utf-8"))
            for number, line in enumerate(code.split("\n"), 1):
                for match in FORBIDDEN.finditer(line):
                    what = (match.group("name") or match.group("stream") or match.group("fmt")
                            or match.group("file"))
                    found.append(f"{path.relative_to(root)}:{number}: {what}: below the command "
                                 "line, report an event (runner/engine/run_events.h) or return "
                                 "text, and read the Environment passed down")
    return found


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    found = problems(root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} use(s) of the terminal or the environment below the command line")
        return 1
    print("no terminal output and no environment read below the command line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
