"""Random trials for the tests that compare column paths: every field varied, runs repeated."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from ablation.columns import TrialColumns
from ablation.schema import TaskResult

__all__ = ["campaign", "columns_equal", "trial"]


def trial(rng: random.Random, tid: str, arm: str, run: int) -> TaskResult:
    status = rng.choices(["completed", "error", "timeout"], [0.88, 0.08, 0.04])[0]
    scored = rng.random() < 0.5
    return TaskResult(
        task_id=tid, arm=arm, run=run, status=status,
        passed=status == "completed" and rng.random() < (0.55 if arm == "baseline" else 0.6),
        latency_s=rng.lognormvariate(0, 1) if rng.random() < 0.8 else None,
        cost=rng.random() if rng.random() < 0.3 else None,
        tokens=rng.randrange(500) if rng.random() < 0.2 else None,
        attempts=rng.choice([1, 1, 1, 2]),
        error_type="RuntimeError" if status == "error" else None,
        error_message="bad" if status == "error" and rng.random() < 0.5 else None,
        error_stage=rng.choice([None, "agent", "verifier"]) if status == "error" else None,
        quality={"f1": rng.random()} if scored else {},
        quality_errors={"f1": "judge down"} if not scored and rng.random() < 0.1 else {},
        metrics={"steps": float(rng.randrange(9))} if rng.random() < 0.2 else {},
        category=rng.choice([None, "", "math", "code"]),
        critical=rng.random() < 0.05,
    )  # fmt: skip


def campaign(seed: int, n_tasks: int) -> tuple[list[TaskResult], list[TaskResult]]:
    """Random trials: repeated runs in any order, one-sided tasks, errors, labels, numbers."""
    rng = random.Random(seed)
    sides: dict[str, list[TaskResult]] = {"baseline": [], "candidate": []}
    for i in rng.sample(range(10 * n_tasks), n_tasks):
        for arm, rows in sides.items():
            if rng.random() < 0.03:
                continue
            for run in rng.sample(range(3), rng.choice([1, 1, 1, 2, 3])):
                rows.append(trial(rng, f"task-{i:07d}", arm, run))
    rng.shuffle(sides["candidate"])
    return sides["baseline"], sides["candidate"]


def columns_equal(a: TrialColumns, b: TrialColumns) -> None:
    for name in ("task_id", "run", "passed", "status", "latency_s", "cost", "tokens", "category",
                 "critical", "error_type", "attempts", "error", "error_stage"):  # fmt: skip
        if getattr(a, name) is not None:  # the plain-record path leaves error columns out
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for group in ("quality", "metrics", "quality_errors"):
        x, y = getattr(a, group), getattr(b, group)
        assert x.keys() == y.keys(), group
        for key in x:
            np.testing.assert_array_equal(x[key], y[key], err_msg=f"{group}.{key}")


def stored_campaign(path: Path, seed: int, n_tasks: int) -> tuple[str, list[TaskResult], list[TaskResult]]:
    """A complete campaign of :func:`campaign`'s trials written to the run store at ``path``: its
    id, and the baseline's and the candidate's trials."""
    from ablation.config import CampaignConfig
    from ablation.store.run_store import RunStore

    baseline, candidate = campaign(seed, n_tasks)
    with RunStore(path) as store:
        cid = store.create_campaign(
            config=CampaignConfig(n_resamples=200), suite_fingerprint="f",
            task_digests={r.task_id: "d" for r in baseline + candidate},
            baseline_agent="b", candidate_agent="c",
        )  # fmt: skip
        store.append_many(cid, baseline + candidate)
        store.set_status(cid, "complete")
    return cid, baseline, candidate
