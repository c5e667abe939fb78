"""Runs every SQL example of docs/database.md against a real database, so that a schema change
that breaks a documented query (a column renamed, a table turned into a view) fails a test.

    check_database_queries.py RUNNER LOGDIR DATABASE_MD

The database is made by `RUNNER import LOGDIR` (twice, so that queries across runs have two),
from the logs TorchDevice's own runner wrote (tests/runner/fixtures/torchdevice/logs). Each
```sql block runs on a fresh copy of it, so that the housekeeping examples that delete rows do not
change what the others read. Exits 1 naming each block (by line) that SQLite refuses.
"""

from __future__ import annotations

import pathlib
import re
import sqlite3
import subprocess
import sys
import tempfile

SQL_BLOCK = re.compile(r"^```sql\n(.*?)^```", re.S | re.M)


def sql_blocks(markdown: str) -> list[tuple[int, str]]:
    """Each ```sql block's text with the line its fence is on (1-based)."""
    return [(markdown.count("\n", 0, m.start()) + 1, m.group(1))
            for m in SQL_BLOCK.finditer(markdown)]


def main() -> int:
    runner, log_dir, doc = (pathlib.Path(a) for a in sys.argv[1:4])
    blocks = sql_blocks(doc.read_text(encoding="utf-8"))
    if not blocks:
        print(f"{doc}: no ```sql blocks found", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="devshim-db-queries-") as tmp:
        db = pathlib.Path(tmp) / "results.db"
        for _ in range(2):
            subprocess.run([str(runner), "import", str(log_dir), "--db", str(db)], check=True,
                           stdout=subprocess.DEVNULL)
        failures = []
        for line, sql in blocks:
            copy = pathlib.Path(tmp) / f"block-{line}.db"
            with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
                source.backup(target)
            con = sqlite3.connect(copy)
            try:
                con.executescript(sql)
            except sqlite3.Error as e:
                failures.append(f"{doc}:{line}: {e}")
            finally:
                con.close()
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{len(blocks) - len(failures)} of {len(blocks)} SQL examples ran")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
