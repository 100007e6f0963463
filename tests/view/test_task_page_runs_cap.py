"""A task page shows at most :data:`~ablation.view.task_page.RUNS_SHOWN` runs of each arm in full,
the lowest run numbers first, and one line per arm counting the others and naming the command that
exports them; its size then does not grow with the runs. The same holds for a task's page in a
comparison of two stored arms (``/compare/task``).

The store is written with :class:`~ablation.store.RunStore` (one campaign, a task of many runs and
one of exactly :data:`RUNS_SHOWN` runs, every output a few thousand characters); pages are read
over HTTP (Starlette's test client).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog
from ablation.view.task_page import RUNS_SHOWN

MANY = 3 * RUNS_SHOWN + 7
#: Characters of each trial's output: the pages differ in size by whole trials, if at all.
OUTPUT = 4_000
TASKS = {"many": MANY, "few": RUNS_SHOWN}


def _store(path: Path) -> str:
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100, runs=MANY), suite_fingerprint="f",
            task_digests=dict.fromkeys(TASKS, "d"), baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        store.append_many(cid, [
            TaskResult(task_id=tid, arm=arm, run=k, passed=(k % 2 == 0) == (arm == "baseline"),
                       output=f"{arm}-run-{k}:" + "x" * OUTPUT)
            for tid, runs in TASKS.items() for arm in ("baseline", "candidate") for k in range(runs)
        ])  # fmt: skip
    return cid


def _runs(page: str, arm: str) -> list[int]:
    return [int(r) for r in re.findall(rf'<div class="trial {arm}" data-arm="{arm}" data-run="(\d+)">', page)]


def test_each_arm_shows_its_first_runs_and_counts_the_rest(tmp_path: Path) -> None:
    cid = _store(tmp_path / "runs.db")
    pages = {
        "task": lambda tid: (f"/campaign/{cid}/task", {"id": tid}),
        "compare": lambda tid: ("/compare/task", {"baseline": f"{cid}:baseline", "candidate": f"{cid}:candidate", "id": tid}),
    }  # fmt: skip
    with TestClient(create_app(Catalog(tmp_path / "runs.db"))) as client:
        for kind, where in pages.items():
            few, many = (client.get(path, params=params) for path, params in map(where, ("few", "many")))
            assert few.status_code == many.status_code == 200, kind
            for arm in ("baseline", "candidate"):
                assert _runs(few.text, arm) == list(range(RUNS_SHOWN)), kind
                assert _runs(many.text, arm) == list(range(RUNS_SHOWN)), kind  # run 0: the diff's
                assert f"{arm}-run-{RUNS_SHOWN}:" not in many.text, kind
            text = html.unescape(many.text)
            note = (
                f"and {MANY - RUNS_SHOWN} more runs not shown ({MANY} in all): ablation report {cid} "
                "--export-jsonl FILE writes every trial"
            )
            assert text.count(note) == 2, (kind, re.findall(r'<p class="note">and .*?</p>', text))
            assert "more runs not shown" not in few.text, kind
            # the same trials shown: the pages differ by the two notes and the task id only
            assert abs(len(many.text) - len(few.text)) < 500, (kind, len(many.text), len(few.text))
