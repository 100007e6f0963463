"""A store for the viewer's page and layout tests: real campaigns with what a report can hold.

- ``exclude``: 58 tasks run with ``on_error="exclude"``: ``err-task`` raises in the candidate and
  ``timeout-task`` outlives the candidate's timeout, so the pairing leaves both out; one task id
  is 300 characters long; the campaign carries labels, one of them markup. More than one page of
  the task table (50 rows).
- ``sequential``: 60 tasks, a candidate that fixes every third task, ``--sequential`` with a
  10 pp margin: it stops early (non-inferior). One task it did not run then gets a stored
  candidate trial, as a trial in flight at the stop does.
- ``latency``: 40 tasks whose trials are written with set latencies (a campaign cannot choose
  its own), the candidate 0.03 % slower on average: its latency ratio and interval differ only in
  the fourth digit.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ablation import (
    AblationTask,
    CampaignConfig,
    GatePolicy,
    SequentialPolicy,
    run_ablation_campaign,
)
from ablation.store import RunStore

LONG_ID = "long-" + "x" * 300
LABELS = {"team": "<b>core</b>", "model": "gpt-x"}
SPECIAL = ("err-task", "timeout-task", LONG_ID)


def exclude_suite() -> list[AblationTask]:
    """55 plain tasks and the three special ones: the expected output is twice ``n``."""
    ids = [f"plain-{i:02d}" for i in range(55)] + list(SPECIAL)
    return [
        AblationTask(task_id=tid, input_data={"id": tid, "n": n}, expected_output=2 * n,
                     category=("algebra", "logic")[n % 2])
        for n, tid in enumerate(ids)
    ]  # fmt: skip


def baseline_left_to_right(task: dict[str, Any]) -> Any:
    """Right except when ``n`` is a multiple of 4."""
    n = task["n"]
    return 2 * n if n % 4 else 2 * n + 1


def candidate_with_precedence(task: dict[str, Any]) -> Any:
    """Right except when ``n`` is a multiple of 5; raises on ``err-task``, hangs on
    ``timeout-task``."""
    if task["id"] == "err-task":
        raise ValueError("boom <b>bold</b>")
    if task["id"] == "timeout-task":
        time.sleep(1.0)
    n = task["n"]
    return 2 * n if n % 5 else 2 * n + 1


def sequential_suite() -> list[AblationTask]:
    """60 tasks ``s-00`` ... ``s-59``."""
    return [
        AblationTask(task_id=f"s-{i:02d}", input_data={"n": i}, expected_output=i)
        for i in range(60)
    ]


def sequential_baseline(task: dict[str, Any]) -> int:
    """Wrong on every third task."""
    n = int(task["n"])
    return n + 1 if n % 3 == 0 else n


def sequential_candidate(task: dict[str, Any]) -> int:
    """Always right."""
    return int(task["n"])


def _latency_campaign(path: Path) -> str:
    from ablation.schema import TaskResult

    ids = [f"lat-{i:02d}" for i in range(40)]
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=200, seed=3), suite_fingerprint="1" * 64,
            task_digests=dict.fromkeys(ids, "d"), baseline_agent="lat:baseline",
            candidate_agent="lat:candidate",
        )  # fmt: skip
        trials = [
            TaskResult(task_id=tid, arm=arm, passed=True,
                       latency_s=1.0 if arm == "baseline" else 1.0 + (0.0003 + 0.002 * ((i % 5) - 2)))
            for i, tid in enumerate(ids) for arm in ("baseline", "candidate")
        ]  # fmt: skip
        store.append_many(cid, trials)
        store.set_status(cid, "complete")
    return cid


def build(path: Path) -> dict[str, str]:
    """Write the store at ``path``; return the campaign ids by name."""
    out: dict[str, str] = {}
    config = CampaignConfig(
        n_resamples=200, seed=7, on_error="exclude", timeout_s=0.3, labels=LABELS
    )
    report = run_ablation_campaign(baseline_left_to_right, candidate_with_precedence,
                                   exclude_suite(), config=config, store=path)  # fmt: skip
    out["exclude"] = report.provenance.campaign_id or ""
    config = CampaignConfig(
        n_resamples=200, seed=11, sequential=SequentialPolicy(),
        gates=GatePolicy(noninferiority_margin=0.1),
    )  # fmt: skip
    report = run_ablation_campaign(sequential_baseline, sequential_candidate, sequential_suite(),
                                   config=config, store=path)  # fmt: skip
    cid = out["sequential"] = report.provenance.campaign_id or ""
    assert report.sequential is not None and report.sequential.stopped_early, report.sequential
    from ablation.schema import TaskResult

    not_run = next(e.task_id for e in report.excluded if e.run is None)
    with RunStore(path) as store:
        if not any(t.arm == "candidate" for t in store.results(cid, task_ids=[not_run])):
            store.append_many(cid, [TaskResult(task_id=not_run, arm="candidate", passed=True,
                                               latency_s=0.01)])  # fmt: skip
        store.set_status(cid, "complete")
    out["late"] = not_run
    out["latency"] = _latency_campaign(path)
    return out
