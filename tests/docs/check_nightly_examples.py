"""docs/nightly.md quotes each file of docs/examples/ verbatim, after a line
<!-- docs/examples/NAME -->; the two must not drift apart. YAML files must parse (when PyYAML
is installed).

    python tests/docs/check_nightly_examples.py DOCS_DIR
"""
import pathlib
import re
import sys


def main(docs: pathlib.Path) -> int:
    text = (docs / "nightly.md").read_text()
    quoted = dict(re.findall(r"<!-- docs/examples/(\S+) -->\n```[a-z]*\n(.*?)```\n", text, re.S))
    errors = []
    files = sorted(p.name for p in (docs / "examples").iterdir() if p.is_file())
    for name in files:
        body = (docs / "examples" / name).read_text()
        if name not in quoted:
            errors.append(f"docs/nightly.md does not quote docs/examples/{name}")
        elif quoted[name] != body:
            errors.append(f"docs/nightly.md's copy of docs/examples/{name} differs from the file")
        if name.endswith((".yml", ".yaml")):
            try:
                import yaml  # optional
            except ImportError:
                continue
            try:
                list(yaml.safe_load_all(body))
            except yaml.YAMLError as e:
                errors.append(f"docs/examples/{name}: {e}")
    for name in quoted:
        if name not in files:
            errors.append(f"docs/nightly.md quotes docs/examples/{name}, which does not exist")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{len(files)} example files checked, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
