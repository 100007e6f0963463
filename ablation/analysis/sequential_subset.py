"""Restrict paired data to the tasks a sequential campaign ran up to its decision.

The tasks after the deciding one in run order are listed in ``excluded`` with a reason that starts
with :data:`STOPPED_EARLY` (the completeness gate ignores those); any of their trials that finished
in flight at the stop are dropped (from the columns, the failures, the per-arm trial counts and
the arms' error and timeout counts, which are counted from the same kept failures as the errors
section), so the report depends only on the decision, not on timing.

Limit: an arm's ``retried``, ``cost_total`` and scorer-error counts are totals without a per-task
breakdown; they still include trials that finished in flight after the stop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ablation.analysis.accumulate import ArmColumns
from ablation.analysis.pairing import PairedData
from ablation.report import ExcludedItem

__all__ = ["STOPPED_EARLY", "keep_tasks"]

#: Start of the excluded reason of every task a sequential campaign did not run.
STOPPED_EARLY = "not run (stopped early)"


def _arm(columns: ArmColumns, keep: np.ndarray, failed: dict[str, int]) -> ArmColumns:
    return dataclasses.replace(
        columns,
        errors=failed.get("error", 0),
        timeouts=failed.get("timeout", 0),
        passes=columns.passes[keep],
        runs=columns.runs[keep],
        latency=columns.latency[keep],
        cost=columns.cost[keep],
        quality={k: v[keep] for k, v in columns.quality.items()},
        metrics={k: v[keep] for k, v in columns.metrics.items()},
        n_trials=int(columns.runs[keep].sum()),
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
    failed: dict[str, dict[str, int]] = {"baseline": {}, "candidate": {}}
    for _tid, arm, _run, status, *_ in failures:
        failed[arm][status] = failed[arm].get(status, 0) + 1
    return dataclasses.replace(
        data,
        task_ids=task_ids,
        categories=[data.categories[i] for i in idx],
        families=families,
        critical=data.critical[idx],
        baseline=_arm(data.baseline, idx, failed["baseline"]),
        candidate=_arm(data.candidate, idx, failed["candidate"]),
        excluded=excluded,
        has_families=len(set(families)) < len(families),
        failures=failures,
        trials_seen=_trials_seen(data, keep, idx),
        trials_of=None,
    )


def _trials_seen(data: PairedData, keep: set[str], idx: np.ndarray) -> dict[str, int]:
    """Trials per arm of the kept tasks only: a trial that finished in flight after the
    decision (of a task not kept, paired or not) must not count, or the errors section would
    depend on timing."""
    if data.trials_of is not None:
        return data.trials_of(keep)
    return {"baseline": int(data.baseline.runs[idx].sum()), "candidate": int(data.candidate.runs[idx].sum())}
