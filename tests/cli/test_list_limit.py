"""``ablation list`` at scale: the newest 20 by default (``--limit``), ``--store``, and a listing
that reads the task counts, not the task digests.

Each campaign is compared with the store read independently (``sqlite3`` and ``json``): which
campaigns are newest, and how many task digests each holds.
"""

from __future__ import annotations

import json
import sqlite3
import tracemalloc
from pathlib import Path

import pytest
from helpers.cli_shared import run_here
from helpers.store_rows import copy_first_campaign

from ablation.cli.listing import campaign_rows
from ablation.config import CampaignConfig
from ablation.store.run_store import RunStore


def _store(path: Path, n_campaigns: int, n_tasks: int = 3) -> None:
    """``n_campaigns`` campaigns of ``n_tasks`` tasks, created one after another."""
    with RunStore(path) as store:
        for k in range(n_campaigns):
            digests = {f"t{k}-{i}-\u00e9": f"{i:064x}" for i in range(n_tasks + k % 3)}
            store.create_campaign(
                config=CampaignConfig(), suite_fingerprint=f"{k:064x}", task_digests=digests,
                baseline_agent="b", candidate_agent=f"c{k}",
            )  # fmt: skip


def _newest(path: Path) -> list[tuple[str, int]]:
    """``(id, task count)`` of every campaign, newest first, read with sqlite3 and json."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT id, task_digests_json FROM campaigns ORDER BY created_at DESC, rowid DESC"
        ).fetchall()
    return [(cid, len(json.loads(text))) for cid, text in rows]


def _table_ids(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines()[1:] if not line.startswith("...")]


def test_the_table_shows_the_newest_20_and_says_how_to_see_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _store(path, 25)
    newest = _newest(path)
    done = run_here(["list", str(path)])
    assert done.returncode == 0, done.stderr
    assert _table_ids(done.stdout) == [cid for cid, _ in newest[:20]]
    assert done.stdout.splitlines()[-1] == "... 5 older campaigns not shown (--limit 0 lists all 25)"
    everything = run_here(["list", str(path), "--limit", "0"])
    assert _table_ids(everything.stdout) == [cid for cid, _ in newest]
    assert "not shown" not in everything.stdout
    three = run_here(["list", str(path), "--limit", "3"]).stdout
    assert _table_ids(three) == [cid for cid, _ in newest[:3]]
    assert three.splitlines()[-1] == "... 22 older campaigns not shown (--limit 0 lists all 25)"


def test_json_lists_every_campaign_unless_a_limit_is_given(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _store(path, 23)
    newest = _newest(path)
    rows = json.loads(run_here(["list", str(path), "--format", "json"]).stdout)
    assert [(r["campaign_id"], r["n_tasks"]) for r in rows] == newest
    two = json.loads(run_here(["list", str(path), "--format", "json", "--limit", "2"]).stdout)
    assert [(r["campaign_id"], r["n_tasks"]) for r in two] == newest[:2]


def test_a_negative_limit_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _store(path, 1)
    done = run_here(["list", str(path), "--limit", "-1"])
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "--limit" in done.stderr, done.stderr


def test_store_is_accepted_as_a_flag_as_report_and_run_take_it(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _store(path, 2)
    positional = run_here(["list", str(path)])
    flag = run_here(["list", "--store", str(path)])
    both = run_here(["list", str(path), "--store", str(tmp_path / "." / "runs.db")])
    assert positional.returncode == flag.returncode == both.returncode == 0, flag.stderr + both.stderr
    assert flag.stdout == positional.stdout == both.stdout
    assert _table_ids(flag.stdout) == [cid for cid, _ in _newest(path)]


def test_two_different_stores_are_a_usage_error_naming_both(tmp_path: Path) -> None:
    path, other = tmp_path / "runs.db", tmp_path / "other.db"
    _store(path, 1)
    _store(other, 1)
    done = run_here(["list", str(path), "--store", str(other)])
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("ablation: error: ablation list: ") and str(path) in line and str(other) in line


def test_task_digests_hand_written_with_other_characters_are_counted_as_python_reads_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    _store(path, 2)
    with sqlite3.connect(path) as conn:  # raw UTF-8 (ablation writes \\u escapes) and a NaN
        conn.execute("""UPDATE campaigns SET task_digests_json = '{"\u00e9": "d", "x": NaN}'""")
    rows = json.loads(run_here(["list", str(path), "--format", "json"]).stdout)
    assert [(r["campaign_id"], r["n_tasks"]) for r in rows] == _newest(path)


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"a": "\u00e9"'])
def test_damaged_task_digests_among_those_shown_are_an_error_line_naming_the_campaign(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "runs.db"
    _store(path, 3)
    [(damaged, _), (readable, _), *_] = _newest(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE campaigns SET task_digests_json = ? WHERE id = ?", (text, damaged))
    done = run_here(["list", str(path), "--limit", "2"])
    assert done.returncode == 1
    assert _table_ids(done.stdout) == [readable]
    [line] = done.stderr.splitlines()
    assert line.startswith(f"ablation: error: run store {path}: campaign {damaged!r}: its task digests"), line


def test_listing_does_not_hold_the_task_digests(tmp_path: Path) -> None:
    """Python's peak allocation while listing stays far below the digests' text alone (what the
    listing held, decoded, before: ~80 bytes a task for every campaign)."""
    path = tmp_path / "runs.db"
    _store(path, 1, n_tasks=2000)
    text_bytes = copy_first_campaign(path, 60)  # 60 copies of that campaign under new ids
    assert text_bytes > 10_000_000
    tracemalloc.start()
    try:
        rows = campaign_rows(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(r["campaign_id"], r["n_tasks"]) for r in rows] == _newest(path)
    assert peak < text_bytes / 20, (peak, text_bytes)
