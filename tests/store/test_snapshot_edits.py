"""A snapshot never outlives an edit of the rows or tasks it was written from.

An arm snapshot is a cache of the arm's rows, used while the rows' count and ``rowid`` sum are
those it was written with. A hand edit with ``sqlite3`` that deletes a trial row and inserts it
again under the same ``rowid`` (with another verdict) keeps both: the report must then read the
rows, never show the snapshot's numbers. The reference is the rows as ``sqlite3`` reads them.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from helpers.random_trials import stored_campaign

from ablation.cli.main import main
from ablation.store.run_store import RunStore

#: The ``trials_deleted`` trigger as stores of schema 5 were first written (it kept the counts
#: only), to check that a writable open replaces it.
_COUNTS_ONLY_TRIGGER = """
CREATE TRIGGER trials_deleted AFTER DELETE ON trials BEGIN
    UPDATE trial_counts SET n = n - 1, rowid_sum = rowid_sum - OLD.rowid
    WHERE campaign_id = OLD.campaign_id AND arm = OLD.arm; END;
"""


def _complete_store(path: Path) -> str:
    """A complete campaign of random trials, its snapshots written; its id."""
    cid, _, _ = stored_campaign(path, 11, 60)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM arm_snapshots").fetchone()[0] == 2
    return cid


def _reinsert_as_passed(path: Path) -> int:
    """Delete every completed, failed candidate trial and insert it again, passed, under its own rowid (as
    an editor that writes a changed row as a delete and an insert does); how many."""
    with sqlite3.connect(path) as conn:
        names = [r[1] for r in conn.execute("PRAGMA table_info(trials)")]
        rows = conn.execute(
            "SELECT rowid, * FROM trials WHERE arm = 'candidate' AND status = 'completed'"
            " AND passed = 0"
        ).fetchall()
        for row in rows:
            conn.execute("DELETE FROM trials WHERE rowid = ?", (row[0],))
            values = dict(zip(["rowid", *names], row, strict=True), passed=1)
            conn.execute(
                f"INSERT INTO trials ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                list(values.values()),
            )
    return len(rows)


def _stored_passes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        sql = "SELECT SUM(passed) FROM trials WHERE arm = 'candidate'"
        return int(conn.execute(sql).fetchone()[0])


def _report(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    out = tmp_path / "report.json"
    code = main(["report", "--store", str(path), "--format", "json", "--output", str(out)])
    assert code in (0, 2), capsys.readouterr().err
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_row_deleted_and_inserted_under_its_rowid_is_read_from_the_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    cid = _complete_store(path)
    before = _stored_passes(path)
    assert _reinsert_as_passed(path) > 0
    assert _stored_passes(path) > before
    assert _report(path, tmp_path, capsys)["candidate"]["passes"] == _stored_passes(path)
    with RunStore(path, read_only=True) as store:
        assert int(store.trial_columns(cid, "candidate").passed.sum()) == _stored_passes(path)


def test_a_writable_open_replaces_a_delete_trigger_that_keeps_snapshots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    _complete_store(path)
    with sqlite3.connect(path) as conn:
        conn.executescript(f"DROP TRIGGER trials_deleted; {_COUNTS_ONLY_TRIGGER}")
    RunStore(path).close()  # as `ablation run` opens it
    _reinsert_as_passed(path)
    assert _report(path, tmp_path, capsys)["candidate"]["passes"] == _stored_passes(path)
    with sqlite3.connect(path) as conn:
        triggers = conn.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'trials'"
        ).fetchone()[0]
    assert triggers == 3
