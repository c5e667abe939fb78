"""A pytest suite written for a benchmark: ``files`` test files from one template, and its
suite.json (docs/suites.md). Shared by the Python benchmarks that run the runner on one."""

import json


def write_pytest_suite(root, name, stem, template, files):
    """Writes ``root/tests/test_<stem>_NNN.py`` (``template.format(n=NNN)``) for NNN below
    ``files`` and ``root/suite.json`` naming the suite ``name``; returns ``root``."""
    (root / "tests").mkdir(parents=True)
    for n in range(files):
        (root / "tests" / f"test_{stem}_{n:03}.py").write_text(template.format(n=n))
    suite = {
        "name": name,
        "project_root": ".",
        "tests_dir": "tests",
        "framework": "pytest",
        "timeout_s": 600,
    }
    (root / "suite.json").write_text(json.dumps(suite) + "\n")
    return root
