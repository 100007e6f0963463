"""A campaign whose stored task list is edited is reported from its rows, never from a snapshot
that says it holds every task.

An arm snapshot records whether the arm's task ids are exactly the campaign's (``tasks_match``),
and when both arms say so ``ablation report`` does not decode the campaign's task digests. A task
added to the stored digests by hand (``sqlite3``) was then never looked for: the report said every
expected pair was present. Changing the digests now deletes the snapshots (trigger
``campaign_tasks_updated``), so the report reads the rows and names the task as missing. The
reference is the store itself, read with ``sqlite3``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from helpers.cli import run_here

from ablation import run_ablation_campaign
from ablation.schema import AblationTask


def _plain(x: int) -> int:
    return x


def test_a_task_added_to_the_digests_is_missing_in_the_report(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    tasks = [AblationTask(task_id=f"t{n}", input_data=n, expected_output=n) for n in range(3)]
    run_ablation_campaign(_plain, _plain, tasks, store=store)
    with sqlite3.connect(store) as conn:
        [(cid, raw)] = conn.execute("SELECT id, task_digests_json FROM campaigns").fetchall()
        assert conn.execute("SELECT COUNT(*) FROM arm_snapshots WHERE tasks_match = 1").fetchone() == (2,)
        digests = {**json.loads(raw), "t9": "0123456789abcdef"}
        conn.execute("UPDATE campaigns SET task_digests_json = ? WHERE id = ?", (json.dumps(digests), cid))
    done = run_here(["report", cid, "--store", str(store), "--format", "json"])
    report = json.loads(done.stdout)
    gate = next(g for g in report["gates"] if g["name"] == "complete comparison")
    assert gate["status"] == "fail" and "t9" in gate["tasks"], gate
    assert done.returncode == 2
    with sqlite3.connect(store) as conn:  # the report read the rows: the snapshots are gone
        assert conn.execute("SELECT COUNT(*) FROM arm_snapshots").fetchone() == (0,)
