"""Rows written into a run store by SQL, for tests of many campaigns and of older stores."""

from __future__ import annotations

import sqlite3
from pathlib import Path

#: The tables of a schema-1 run store (before ``trials.tokens``), for tests of older stores.
V1_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE campaigns (
    id TEXT PRIMARY KEY, status TEXT NOT NULL, config_json TEXT NOT NULL,
    suite_fingerprint TEXT NOT NULL, task_digests_json TEXT NOT NULL,
    baseline_agent TEXT NOT NULL, candidate_agent TEXT NOT NULL, provenance_json TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE trials (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    task_id TEXT NOT NULL, arm TEXT NOT NULL, run INTEGER NOT NULL, status TEXT NOT NULL,
    passed INTEGER NOT NULL, latency_s REAL, wall_s REAL, attempts INTEGER NOT NULL, cost REAL,
    category TEXT, critical INTEGER NOT NULL, error_type TEXT, result_json TEXT NOT NULL,
    PRIMARY KEY (campaign_id, task_id, arm, run));
INSERT INTO meta VALUES ('schema_version', '1');
"""


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
