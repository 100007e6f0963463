"""A regression whose candidate trial failed (an error or a timeout, not a wrong answer) is marked
so on the task list and the task's page, and the campaign page says how many regressions are
such, as ``ablation report`` marks them ERROR; a wrong answer, and a task both arms fail with a
candidate error, are not marked.

The store is a real :class:`RunStore`; the reference is the report ``ablation report`` builds of
it (:func:`report_stored_campaign`: its ``regressions`` and ``errored_regressions``); pages are
read over HTTP (Starlette's test client).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from starlette.testclient import TestClient

from ablation import CampaignConfig
from ablation.analysis.stored import report_stored_campaign
from ablation.schema import TaskResult
from ablation.store import RunStore
from ablation.view.app import create_app
from ablation.view.catalog import Catalog

#: Task -> the candidate's two runs: "ok", "wrong", "error" or "timeout". The baseline passes
#: every task but ``hard``, which it fails.
CANDIDATE = {
    "crash": ("error", "error"), "slow": ("timeout", "wrong"), "wrong": ("wrong", "wrong"),
    "fine": ("ok", "ok"), "hard": ("error", "error"), "mixed": ("error", "ok"),
}  # fmt: skip


def _trial(task: str, arm: str, run: int, kind: str) -> TaskResult:
    if kind in ("error", "timeout"):
        return TaskResult(task_id=task, arm=arm, run=run, status=kind, error_stage="agent",
                          error_type="RuntimeError" if kind == "error" else "Timeout", error_message="x")  # fmt: skip
    return TaskResult(task_id=task, arm=arm, run=run, passed=kind == "ok", output=kind, latency_s=0.01)


def _rows(page: str) -> dict[str, str]:
    """Task id -> the text of its row on a task list page."""
    body = re.search(r'<table id="tasks">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert body is not None
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S):
        task = re.search(r'class="task[^"]*">([^<]*)</a>', row)
        assert task is not None
        rows[html.unescape(task.group(1))] = html.unescape(re.sub(r"<[^>]+>", " ", row))
    return rows


def test_regressions_that_are_candidate_errors_are_marked(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=100, runs=2), suite_fingerprint="a" * 64,
            task_digests=dict.fromkeys(CANDIDATE, "d"), baseline_agent="a", candidate_agent="b",
        )  # fmt: skip
        trials = [_trial(t, "baseline", run, "wrong" if t == "hard" else "ok") for t in CANDIDATE for run in (0, 1)]
        trials += [_trial(t, "candidate", run, kinds[run]) for t, kinds in CANDIDATE.items() for run in (0, 1)]
        store.append_many(cid, trials)
        store.set_status(cid, "complete")
        report = report_stored_campaign(store, cid)[0]
    errored = set(report.errored_regressions)
    assert errored and set(report.regressions) - errored  # both kinds are there
    with TestClient(create_app(Catalog(path))) as client:
        rows = _rows(client.get(f"/campaign/{cid}/tasks").text)
        campaign = client.get(f"/campaign/{cid}").text
        pages = {t: client.get(f"/campaign/{cid}/task", params={"id": t}).text for t in CANDIDATE}
    assert set(rows) == set(CANDIDATE)
    for task, text in rows.items():
        assert ("candidate error or timeout" in text) == (task in errored), (task, text)
        outcome = re.search(r'id="outcome">.*?</p>', pages[task], re.S)
        assert outcome is not None
        assert ("candidate error or timeout" in outcome.group()) == (task in errored), task
    said = re.search(r'id="errored-regressions">(.*?)</p>', campaign, re.S)
    assert said is not None
    assert f"{len(errored)} of {len(report.regressions)} regressions" in said.group(1)
