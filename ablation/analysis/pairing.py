"""The paired data the analysis works on: the inventory, exclusions and per-task columns.

Pairing is by **task**: with ``runs > 1`` each arm's runs of a task are averaged first, and run
j of the baseline is never paired with run j of the candidate (STATISTICS.md section 5). The
result is columnar (numpy arrays indexed like ``task_ids``), so a million-task report needs no
per-task Python objects.

Inventory rules (nothing dropped silently): a task with results in one arm only, a result whose
id is not in the suite (or the expected ids), an expected id with no result at all, and, with
``on_error="exclude"``, an errored or timed-out trial, are each listed in ``excluded`` with the
reason.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ablation.analysis.accumulate import ArmColumns
from ablation.analysis.arm_totals import ArmTotals
from ablation.columns import CostUnits
from ablation.report import ExcludedItem
from ablation.schema import AblationTask, TaskResult

__all__ = ["ArmColumns", "PairedData", "unmatched_runs"]


@dataclass(frozen=True)
class PairedData:
    """Everything the analysis needs, paired by task.

    Attributes:
        task_ids: Sorted ids of the paired tasks (an object array from the pairing: no list of a
            million references for the cyclic collector to walk; test with ``len``).
        categories: Category of each paired task; when no task has one, a read-only constant
            column of ``"default"`` (:func:`ablation.columns.constant_column`: no list of a
            million references).
        families: Cluster label of each paired task (its family, or its own id).
        critical: Whether each paired task is critical.
        baseline: Baseline columns.
        candidate: Candidate columns.
        runs: Planned runs per task (the maximum seen).
        n_tasks: Size of the inventory (suite, expected ids, or ids seen).
        excluded: What was left out, with reasons.
        trials: ``(task_id, arm) -> first-run TaskResult`` for drill-downs (may be empty).
        tasks: The suite's tasks by id, when known (drill-downs show the expected output).
        has_families: True when some tasks share a family (clusters larger than one task).
        failures: Every failed trial seen (paired or not): task id, arm, run, status,
            ``"Type: message"``, stage, error type.
        trials_seen: Trials seen per arm over every task.
        totals_of: Each arm's :class:`~ablation.analysis.arm_totals.ArmTotals` over the given
            task ids (trials, errors, retries, scorer errors, cost), counted from the trials of
            those tasks, for restricting the data to a subset of its tasks; ``None`` when the
            columns hold every count (one completed trial per task, no cost).
        cost_units: Per arm, the distinct ``(currency, source)`` of every trial with a cost,
            of every task and run (:attr:`~ablation.columns.TrialColumns.cost_units`).
    """

    task_ids: list[str] | NDArray[np.object_]
    categories: list[str] | NDArray[np.object_]
    families: list[str] | NDArray[np.object_]
    critical: np.ndarray
    baseline: ArmColumns
    candidate: ArmColumns
    runs: int
    n_tasks: int
    excluded: list[ExcludedItem] = field(default_factory=list)
    trials: Mapping[tuple[str, str], TaskResult] = field(default_factory=dict)
    tasks: Mapping[str, AblationTask] = field(default_factory=dict)
    has_families: bool = False
    failures: list[tuple[str, str, int, str, str, str, str]] = field(default_factory=list)
    trials_seen: dict[str, int] = field(default_factory=dict)
    totals_of: Callable[[Collection[str]], dict[str, ArmTotals]] | None = None
    cost_units: Mapping[str, CostUnits] = field(default_factory=dict)


def unmatched_runs(keys: Iterable[tuple[str, str, int]]) -> list[ExcludedItem]:
    """Runs of a paired task present in one arm only, listed (sorted) so none goes unnoticed.

    Pairing is by task (each arm's runs are averaged first), so such a run still counts in its
    arm's pass fraction of the task; it is listed because the arms ran the task unequally.
    """
    return [
        ExcludedItem(
            task_id=tid,
            run=run,
            reason=f"unmatched run: {arm} run {run} has no {_OTHER[arm]} run {run}"
            " (kept in the task's mean)",
        )
        for tid, run, arm in sorted((tid, run, arm) for tid, arm, run in keys)
    ]


_OTHER = {"baseline": "candidate", "candidate": "baseline"}
