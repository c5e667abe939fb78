#!/usr/bin/env python3
"""cmake/clang_tidy_check.py fails on a finding, and checks only what changed (ctest's
clang_tidy_check_test, label lint).

    clang_tidy_check_test.py CLANG_TIDY

Each case builds a throw-away git repository with the project's .clang-tidy, a runner/ file and a
compile_commands.json, and runs the check on it as ctest's clang_tidy does.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "cmake" / "clang_tidy_check.py"
CLANG_TIDY = sys.argv.pop(1) if len(sys.argv) > 1 else "clang-tidy"

CLEAN = "int* first(int* p) { return p == nullptr ? nullptr : p; }\n"
FINDING = "int* first(int* p) { return p == 0 ? 0 : p; }\n"  # modernize-use-nullptr


class ClangTidyCheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="devshim-tidy-"))
        self.root = self.tmp / "src"
        (self.root / "runner").mkdir(parents=True)
        shutil.copy(ROOT / ".clang-tidy", self.root / ".clang-tidy")
        self.build = self.tmp / "build"
        self.build.mkdir()
        self.git("init", "-q")
        self.git("config", "user.email", "t@example.com")
        self.git("config", "user.name", "t")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def git(self, *args):
        subprocess.run(["git", "-C", str(self.root), *args], check=True, capture_output=True)

    def write(self, name, text):
        (self.root / "runner" / name).write_text(text)
        entries = [{"directory": str(self.build), "file": str(f),
                    "command": f"c++ -std=c++20 -c {f} -o {f.stem}.o"}
                   for f in sorted((self.root / "runner").glob("*.cpp"))]
        (self.build / "compile_commands.json").write_text(json.dumps(entries))

    def commit(self):
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "x")

    def check(self, *extra, base=None):
        env = dict(os.environ)
        env.pop("DEVSHIM_TIDY_BASE", None)
        if base is not None:
            env["DEVSHIM_TIDY_BASE"] = base
        return subprocess.run([sys.executable, str(CHECK), "--clang-tidy", CLANG_TIDY,
                               "--build", str(self.build), "--root", str(self.root),
                               "--jobs", "1", *extra], capture_output=True, text=True, env=env)

    def test_a_finding_fails_the_check_and_is_shown(self):
        self.write("a.cpp", FINDING)
        r = self.check("--all")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("modernize-use-nullptr", r.stdout)
        self.assertIn("runner/a.cpp", r.stdout)

    def test_clean_code_passes(self):
        self.write("a.cpp", CLEAN)
        r = self.check("--all")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1 files clean", r.stdout)

    def test_old_code_is_left_alone_and_new_code_is_checked(self):
        self.write("old.cpp", FINDING)
        self.commit()
        self.write("new.cpp", CLEAN)
        self.commit()
        r = self.check()  # HEAD~1: only new.cpp changed
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1 of 2 files", r.stdout)
        (self.root / "runner" / "new.cpp").write_text(FINDING)  # not committed yet: new code too
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("runner/new.cpp", r.stdout)
        self.assertNotIn("--- runner/old.cpp", r.stdout)

    def test_a_file_including_a_changed_header_is_checked(self):
        util_h = self.root / "runner" / "util.h"
        util_h.write_text("#pragma once\n" + CLEAN.replace("first", "util"))
        self.write("user.cpp", '#include "util.h"\n' + CLEAN)
        self.write("other.cpp", CLEAN.replace("first", "other"))
        self.commit()
        util_h.write_text("#pragma once\n" + FINDING.replace("first", "util"))
        self.commit()
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("1 of 2 files", r.stdout)
        self.assertIn("runner/util.h", r.stdout)

    def test_without_history_every_file_is_checked(self):
        self.write("old.cpp", FINDING)
        self.commit()  # the only commit: HEAD~1 does not exist
        r = self.check()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("all files", r.stdout)

    def test_a_missing_compile_database_is_a_setup_error(self):
        r = self.check("--all")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("compile_commands.json", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
