"""A run store holding values no ablation wrote is one line naming the store, campaign and trial.

A hand edit, another program or a damaged file can leave a campaign row or a trial row that does
not decode: a status no trial has, text in a number column, an infinity, a blob where text
belongs, a provenance that is not an object. ``ablation report`` and ``ablation list`` say which
store, campaign, arm and task, exit 1, never a bare ``KeyError: 'x'`` naming nothing. An arm
snapshot is a copy of the rows: one whose zip does not decode is said in a warning, and the
report is built from the rows, the same report as from an intact store.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from helpers.random_trials import stored_campaign

from ablation.cli.main import main


def _store(path: Path) -> tuple[str, str]:
    """A complete campaign of random trials; its id and one task id of the baseline."""
    cid, baseline, _ = stored_campaign(path, 7, 40)
    return cid, min(r.task_id for r in baseline)


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().err


TRIAL_EDITS = {
    "unknown status": "status = 'bogus'",
    "text latency": "latency_s = 'x'",
    "infinite latency": "latency_s = 9e999",
    "negative latency": "latency_s = -1.5",
    "latency past VALUE_LIMIT": "latency_s = 1e300",
    "cost past VALUE_LIMIT": "cost = -1e300",
    "huge run": "run = run + 4611686018427387904",
    "text attempts": "attempts = '{}'",
    "quality not an object": "result_json = json_set(result_json, '$.quality', json('true'))",
}

CAMPAIGN_EDITS = {
    "unknown status": "status = 'bogus'",
    "provenance a list": "provenance_json = '[]'",
    "provenance not JSON": "provenance_json = 'nope'",
    "agent a blob": "baseline_agent = X'00FF'",
    "digests a number": "task_digests_json = '3'",
}


@pytest.mark.parametrize("edit", sorted(TRIAL_EDITS))
def test_a_trial_row_that_does_not_decode_names_its_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str
) -> None:
    path = tmp_path / "runs.db"
    cid, tid = _store(path)
    with sqlite3.connect(path) as conn:
        sql = f"UPDATE trials SET {TRIAL_EDITS[edit]} WHERE task_id = ? AND arm = 'baseline'"
        assert conn.execute(sql, (tid,)).rowcount >= 1
    code, err = _run(["report", "latest", "--store", str(path), "--quiet"], capsys)
    assert code == 1, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"ablation: error: run store {path}: campaign {cid!r}: the baseline trial of task {tid!r}"), err
    assert "the store is damaged or was written by another program" in err


@pytest.mark.parametrize("edit", sorted(CAMPAIGN_EDITS))
@pytest.mark.parametrize("command", ["report", "list"])
def test_a_campaign_row_that_does_not_decode_names_the_store_and_campaign(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str, command: str
) -> None:
    path = tmp_path / "runs.db"
    cid, _ = _store(path)
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE campaigns SET {CAMPAIGN_EDITS[edit]}")
    args = ["report", cid, "--store", str(path), "--quiet"] if command == "report" else ["list", str(path)]
    code, err = _run(args, capsys)
    assert code == 1, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"ablation: error: run store {path}: campaign {cid!r}"), err
    assert "the store is damaged or was written by another program" in err


def test_a_damaged_snapshot_is_said_and_the_report_comes_from_the_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    cid, _ = _store(path)
    json_args = ["report", cid, "--store", str(path), "--format", "json", "--output"]
    assert _run([*json_args, str(tmp_path / "intact.json")], capsys)[0] in (0, 2)
    with sqlite3.connect(path) as conn:
        (rowid, data), = conn.execute("SELECT rowid, data FROM arm_snapshots WHERE arm = 'baseline'")  # fmt: skip
        middle = len(data) // 2
        damaged = data[:middle] + bytes(b ^ 0xFF for b in data[middle : middle + 64]) + data[middle + 64 :]
        conn.execute("UPDATE arm_snapshots SET data = ? WHERE rowid = ?", (damaged, rowid))
    code, err = _run([*json_args, str(tmp_path / "damaged.json")], capsys)
    assert code in (0, 2), err
    assert f"run store {path}: campaign {cid!r}: the baseline snapshot cannot be read" in err, err
    intact = json.loads((tmp_path / "intact.json").read_text())
    assert json.loads((tmp_path / "damaged.json").read_text()) == intact


def _two_campaigns_one_damaged(path: Path) -> tuple[str, str]:
    """``(readable id, damaged id)``: two campaigns, the older one's provenance edited to a list."""
    damaged, _ = _store(path)
    readable, _ = _store(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE campaigns SET provenance_json = '[]' WHERE id = ?", (damaged,))
    return readable, damaged


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_list_shows_the_readable_campaigns_and_names_the_damaged_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    path = tmp_path / "runs.db"
    readable, damaged = _two_campaigns_one_damaged(path)
    code = main(["list", str(path), *(["--format", "json"] if fmt == "json" else [])])
    out, err = capsys.readouterr()
    assert code == 1
    assert readable in out and damaged not in out
    if fmt == "json":
        assert [row["campaign_id"] for row in json.loads(out)] == [readable]
    assert err.count("\n") == 1 and err.startswith(f"ablation: error: run store {path}: campaign {damaged!r}"), err


def test_the_viewer_lists_the_readable_campaigns_and_names_the_damaged_one(tmp_path: Path) -> None:
    pytest.importorskip("starlette")  # the `view` extra (part of `test`)
    from ablation.view.catalog import Catalog
    from ablation.view.pages import campaigns_page

    path = tmp_path / "runs.db"
    readable, damaged = _two_campaigns_one_damaged(path)
    catalog = Catalog(path)
    try:
        page = campaigns_page(catalog)
    finally:
        catalog.close()
    assert f"/campaign/{readable}" in page and f"/campaign/{damaged}" not in page
    assert f'<p class="error">run store {path}: campaign &#x27;{damaged}&#x27; cannot be read' in page
