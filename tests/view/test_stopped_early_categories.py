"""The tasks a sequential campaign never ran (it stopped early) keep their suite category: the
store holds no trial of theirs, so the category is kept beside the campaign when its report is
built, and the viewer's task table lists each under its own category (not ``"default"``), in its
rows, its category filter and a task's page. The reports list those tasks by id and reason only
(``excluded``), with no category, and a stored campaign's report read back is unchanged.

One campaign through the command line, in this process (``ablation run tests/helpers/slow_suite.py
--sequential``, instant agents: ``candidate_c`` regresses a tenth of the 200 tasks and none
improves, so the campaign stops on a significant regression long before the end), then read over
HTTP from the viewer's app (Starlette's test client).
"""

from __future__ import annotations

import contextlib
import html
import json
import re
import sqlite3
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers import cli, slow_suite
from helpers.cli_shared import run_here
from starlette.testclient import TestClient

from ablation.analysis.sequential import STOPPED_EARLY
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

#: The suite's own categories, by task id (the reference).
CATEGORY = {t.task_id: t.category for t in slow_suite.make_tasks()}
ROW = re.compile(r'class="task[^"]*">([^<]*)</a></td><td>([^<]*)</td>')


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The store of the stopped campaign and its JSON report."""
    store = tmp_path_factory.mktemp("stopped") / "runs.db"
    proc = run_here(
        cli.run_args(store, candidates=["candidate_c"], extra=["--sequential"]),
        {"SLOW_AGENTS_SCALE": "0", "SLOW_AGENTS_COUNTER_DIR": None, "SLOW_SUITE_CHANGE": None},
    )
    assert proc.returncode == 2, proc.stderr  # the regression gate fails
    return store, json.loads(proc.stdout)


def _not_run(report: dict) -> list[str]:
    return [e["task_id"] for e in report["excluded"] if e["reason"].startswith(STOPPED_EARLY)]


def test_tasks_never_run_are_listed_under_their_suite_category(stopped: tuple[Path, dict]) -> None:
    store, report = stopped
    not_run = _not_run(report)
    assert report["sequential"]["stopped_early"] and len(not_run) > 100
    with RunStore(store, read_only=True) as s:
        [record] = s.list_campaigns()
        untried = [t for t in not_run if not s.results(record.campaign_id, task_ids=[t])]
    assert untried  # tasks the store holds no trial of (a trial in flight at the stop may be kept)
    base = f"/campaign/{quote(record.campaign_id)}"
    with TestClient(create_app(Catalog(store))) as client:
        assert listed(client, base) == {t: CATEGORY[t] for t in not_run}  # each its own category
        page = client.get(f"{base}/tasks").text
        options = [html.unescape(v) for v in re.findall(r'<option value="([^"]*)"', page)]
        assert "default" not in options and set(slow_suite.CATEGORIES) <= set(options)
        for category in slow_suite.CATEGORIES:  # the filter finds them under their category
            found = listed(client, base, category=category)
            assert found == {t: category for t in not_run if CATEGORY[t] == category}
        first = client.get(f"{base}/task", params={"id": not_run[0]}).text
        assert re.findall(r"<td>category</td><td>([^<]*)</td>", first) == [CATEGORY[not_run[0]]]


def listed(client: TestClient, base: str, **params: str) -> dict[str, str]:
    """``task id -> category`` of every row the excluded tasks' table lists, page by page."""
    rows: dict[str, str] = {}
    for number in range(1, 100):
        page = client.get(f"{base}/tasks", params={"show": "excluded", **params, "page": str(number)})
        assert page.status_code == 200
        rows.update((html.unescape(t), html.unescape(c)) for t, c in ROW.findall(page.text))
        if f"(page {number} of {number})" in page.text:
            return rows
    raise AssertionError("the table did not end")


def test_a_store_older_than_the_kept_categories_still_shows_its_tasks(
    stopped: tuple[Path, dict], tmp_path: Path
) -> None:
    """A store written before the categories were kept, opened read-only: no error, the tasks
    never run listed as before (no category known: the report's default)."""
    store, report = stopped
    older = tmp_path / "older.db"
    with contextlib.closing(sqlite3.connect(store)) as src, contextlib.closing(sqlite3.connect(older)) as dst:
        src.backup(dst)
        dst.execute("DROP TABLE task_categories")
        dst.commit()
    with RunStore(older, read_only=True) as s:
        [record] = s.list_campaigns()
    with TestClient(create_app(Catalog(older))) as client:
        rows = listed(client, f"/campaign/{quote(record.campaign_id)}")
    untried = {t for t in _not_run(report) if rows[t] == "default"}
    assert untried and set(rows) == set(_not_run(report))


def test_a_stored_campaign_reads_back_the_same_report(stopped: tuple[Path, dict]) -> None:
    store, report = stopped
    again = run_here(["report", "latest", "--store", str(store), "--format", "json"])
    assert again.returncode == 2, again.stderr
    read = json.loads(again.stdout)
    assert read["excluded"] == report["excluded"] and read["categories"] == report["categories"]
    assert _not_run(read) == _not_run(report)
