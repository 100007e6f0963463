"""Rows written into a run store by SQL, for tests of many campaigns."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def copy_first_campaign(path: Path, copies: int) -> int:
    """Insert ``copies`` copies of the store's first campaign row under the ids ``copy-000``...;
    return the total length of every campaign's task digests text."""
    with sqlite3.connect(path) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(campaigns)") if r[1] != "id"]
        for k in range(copies):
            conn.execute(
                f"INSERT INTO campaigns (id, {', '.join(cols)}) SELECT ?, {', '.join(cols)}"
                " FROM campaigns WHERE rowid = 1", (f"copy-{k:03d}",),
            )  # fmt: skip
        total = int(conn.execute("SELECT SUM(length(task_digests_json)) FROM campaigns").fetchone()[0])
    conn.close()
    return total
