"""An arm's whole-arm counts over a subset of its tasks (the arm summary of a restricted report).

The arm summary's counts (trials, errors, timeouts, retried trials, scorer errors, cost) are sums
over trials. A report restricted to some of the tasks (a sequential campaign's tasks up to its
decision) must count only the trials of those tasks, the same set its errors section lists, or
the counts would include trials that finished in flight after the stop and depend on timing.
Both are therefore recounted from the trials per task, never from the totals of the whole arm.

Assumptions: ``task_id`` codes index the sorted distinct ids of both arms (``uniq``); ``paired``
holds the codes of the paired tasks (after any ``on_error="exclude"`` exclusion).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ablation.columns import STATUS_CODES, TrialColumns, known_rows

__all__ = ["ArmTotals", "column_totals"]


@dataclass(frozen=True)
class ArmTotals:
    """One arm's counts over a set of tasks.

    Attributes:
        seen: Every trial of those tasks (paired or not).
        errors: Trials of those tasks that ended in an error (paired or not).
        timeouts: Trials of those tasks that timed out (paired or not).
        retried: Trials of those tasks that needed more than one attempt (paired or not).
        quality_errors: Per scorer with at least one error, its errors over those tasks.
        n_trials: Trials of those tasks that are paired (before ``on_error`` exclusions).
        cost_total: Cost of the counted trials of the paired tasks among them (``None``: none).
        cost_trials: How many counted trials of the paired tasks among them reported a cost.
    """

    seen: int
    errors: int
    timeouts: int
    retried: int
    quality_errors: dict[str, int] = field(default_factory=dict)
    n_trials: int = 0
    cost_total: float | None = None
    cost_trials: int = 0


def column_totals(
    arms: Sequence[TrialColumns],
    codes: Sequence[NDArray[np.int64]],
    uniq: NDArray[np.object_],
    paired: NDArray[np.int64],
    exclude: bool,
    task_ids: Collection[str],
) -> dict[str, ArmTotals]:
    """:class:`ArmTotals` of each arm (``baseline``, ``candidate``) over ``task_ids``.

    Args:
        arms: The two arms' trial columns.
        codes: Each row's task code (an index into ``uniq``), per arm.
        uniq: The distinct task ids of both arms, sorted.
        paired: Codes of the paired tasks.
        exclude: ``on_error="exclude"``: only completed trials count toward the cost.
        task_ids: The tasks to count (ids absent from both arms count nothing).
    """
    size = len(uniq)
    wanted = np.array(sorted(set(task_ids)), dtype=object)
    chosen = np.zeros(size, dtype=bool)
    if size and len(wanted):
        pos = np.minimum(np.searchsorted(uniq, wanted), size - 1)
        chosen[pos[uniq[pos] == wanted]] = True
    in_pairs = np.zeros(size, dtype=bool)
    in_pairs[paired] = True
    in_pairs &= chosen
    return {
        arm: _one_arm(cols, code, chosen, in_pairs, exclude)
        for arm, cols, code in zip(("baseline", "candidate"), arms, codes, strict=True)
    }


def _one_arm(
    cols: TrialColumns,
    code: NDArray[np.int64],
    chosen: NDArray[np.bool_],
    in_pairs: NDArray[np.bool_],
    exclude: bool,
) -> ArmTotals:
    rows = chosen[code]
    paired_rows = in_pairs[code]
    quality_errors = {
        name: int(np.count_nonzero(flags & rows)) for name, flags in sorted(cols.quality_errors.items())
    }
    counted = paired_rows & (cols.status == STATUS_CODES["completed"]) if exclude else paired_rows
    cost_rows = known_rows(cols.cost, counted)
    cost_trials = 0 if cost_rows is None else int(np.count_nonzero(cost_rows))
    cost_total = None
    if cost_rows is not None:  # per-task sums first, as the arm's columns add them
        per_task = np.bincount(code[cost_rows], weights=cols.cost[cost_rows], minlength=len(chosen))
        cost_total = float(per_task[in_pairs].sum())
    retried = 0 if cols.attempts is None else int(np.count_nonzero((cols.attempts > 1) & rows))
    return ArmTotals(
        seen=int(np.count_nonzero(rows)),
        errors=int(np.count_nonzero((cols.status == STATUS_CODES["error"]) & rows)),
        timeouts=int(np.count_nonzero((cols.status == STATUS_CODES["timeout"]) & rows)),
        retried=retried,
        quality_errors={name: n for name, n in quality_errors.items() if n},
        n_trials=int(np.count_nonzero(paired_rows)),
        cost_total=cost_total,
        cost_trials=cost_trials,
    )
