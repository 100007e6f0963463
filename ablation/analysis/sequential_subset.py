"""Restrict paired data to the tasks a sequential campaign ran up to its decision.

The tasks after the deciding one in run order are listed in ``excluded`` with a reason that starts
with :data:`STOPPED_EARLY` (the completeness gate ignores those); any of their trials that finished
in flight at the stop are dropped: from the columns, the failures, and every count of the arm
summaries (trials, errors, timeouts, retried trials, scorer errors, cost), which are recounted
from the trials of the kept tasks (:attr:`PairedData.totals_of`), the set the errors section
lists. The report thus depends only on the decision, not on timing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ablation.analysis.accumulate import ArmColumns
from ablation.analysis.arm_totals import ArmTotals
from ablation.analysis.pairing import PairedData
from ablation.report import ExcludedItem

__all__ = ["STOPPED_EARLY", "keep_tasks"]

#: Start of the excluded reason of every task a sequential campaign did not run.
STOPPED_EARLY = "not run (stopped early)"


def _scorers(data: PairedData, keep: np.ndarray, totals: dict[str, ArmTotals] | None) -> set[str]:
    """Scorers with a score or a scorer error in the kept tasks (either arm): a scorer that only
    trials in flight after the stop used is not part of the report."""
    arms = (data.baseline, data.candidate)
    names = {n for a in arms for n, v in a.quality.items() if not np.isnan(v[keep]).all()}
    if totals is None:
        return names | {n for a in arms for n in a.quality}
    return names | {n for t in totals.values() for n in t.quality_errors}


def _arm(
    columns: ArmColumns, keep: np.ndarray, totals: ArmTotals | None, scorers: set[str]
) -> ArmColumns:
    counts: dict[str, Any] = {"n_trials": int(columns.runs[keep].sum())}
    if totals is not None:
        counts = {
            "errors": totals.errors,
            "timeouts": totals.timeouts,
            "retried": totals.retried,
            "quality_errors": totals.quality_errors,
            "cost_total": totals.cost_total,
            "cost_trials": totals.cost_trials,
            "n_trials": totals.n_trials,
        }
    return dataclasses.replace(
        columns,
        **counts,
        passes=columns.passes[keep],
        runs=columns.runs[keep],
        latency=columns.latency[keep],
        cost=columns.cost[keep],
        quality={k: v[keep] for k, v in columns.quality.items() if k in scorers},
        metrics={k: v[keep] for k, v in columns.metrics.items()},
    )


def keep_tasks(data: PairedData, keep: set[str], dropped: Sequence[str]) -> PairedData:
    """``data`` with only the tasks in ``keep``; ``dropped`` (in run order) listed as not run."""
    mask = np.fromiter((tid in keep for tid in data.task_ids), dtype=bool, count=len(data.task_ids))
    idx = np.flatnonzero(mask)
    dropped_set = set(dropped)
    excluded = [e for e in data.excluded if e.task_id not in dropped_set]
    excluded.extend(
        ExcludedItem(
            task_id=tid,
            reason=f"{STOPPED_EARLY}: the sequential campaign had decided before this task",
        )
        for tid in sorted(dropped_set)
    )
    task_ids = [data.task_ids[i] for i in idx]
    families = [data.families[i] for i in idx]
    failures = [f for f in data.failures if f[0] in keep]
    totals = data.totals_of(keep) if data.totals_of is not None else None
    scorers = _scorers(data, idx, totals)
    return dataclasses.replace(
        data,
        task_ids=task_ids,
        categories=[data.categories[i] for i in idx],
        families=families,
        critical=data.critical[idx],
        baseline=_arm(data.baseline, idx, (totals or {}).get("baseline"), scorers),
        candidate=_arm(data.candidate, idx, (totals or {}).get("candidate"), scorers),
        excluded=excluded,
        has_families=len(set(families)) < len(families),
        failures=failures,
        trials_seen=_trials_seen(data, idx, totals),
        totals_of=None,
    )


def _trials_seen(
    data: PairedData, idx: np.ndarray, totals: dict[str, ArmTotals] | None
) -> dict[str, int]:
    """Trials per arm of the kept tasks only: a trial that finished in flight after the
    decision (of a task not kept, paired or not) must not count, or the errors section would
    depend on timing."""
    if totals is not None:
        return {arm: t.seen for arm, t in totals.items()}
    return {"baseline": int(data.baseline.runs[idx].sum()), "candidate": int(data.candidate.runs[idx].sum())}
