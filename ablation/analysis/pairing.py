"""Pair trials by task: the inventory, exclusions and per-task columns the analysis works on.

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

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ablation.analysis.accumulate import Accumulated, ArmColumns
from ablation.analysis.arm_totals import ArmTotals
from ablation.columns import constant_column
from ablation.errors import InputError
from ablation.report import ExcludedItem
from ablation.schema import AblationTask, TaskResult

__all__ = ["ArmColumns", "PairedData", "pair_arrays", "pair_results", "unmatched_runs"]


@dataclass(frozen=True)
class PairedData:
    """Everything the analysis needs, paired by task.

    Attributes:
        task_ids: Sorted ids of the paired tasks.
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
    """

    task_ids: list[str]
    categories: list[str] | NDArray[np.object_]
    families: list[str]
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


def pair_results(
    results: Iterable[Any],
    *,
    tasks: Sequence[AblationTask] | None = None,
    expected_ids: Iterable[str] | None = None,
    on_error: str = "fail",
    keep_trials: bool = True,
    trial_lookup: Mapping[tuple[str, str], TaskResult] | None = None,
) -> PairedData:
    """Pair trial results by task, streaming: memory grows with tasks, not trials.

    Args:
        results: Trials of both arms (any order; several runs allowed): :class:`TaskResult`
            objects, or any objects with the same attributes (e.g. the store's light rows).
        tasks: The suite, if known: it fixes the inventory, categories and critical flags.
        expected_ids: Without a suite, the ids that should be present (missing ones are listed).
        on_error: ``"fail"``: errors and timeouts count as failed trials; ``"exclude"``: they are
            dropped (and listed), and a task left with no trial in an arm is excluded.
        keep_trials: Keep the trials (references) for the drill-downs: each task's first run, and
            every run when a task ran several times.
        trial_lookup: Instead of keeping trials, a mapping ``(task_id, arm) -> TaskResult``
            queried for the drill-downs only (e.g. a lazy view of the store).

    Returns:
        The paired columns.

    Raises:
        InputError: if two results share ``(task_id, arm, run)``.
    """
    acc = Accumulated(on_error == "exclude", keep_trials)
    for t in results:
        acc.add(t)
    task_map = {t.task_id: t for t in tasks} if tasks is not None else {}
    universe, excluded, paired = _inventory(acc, task_map, tasks is not None, expected_ids)
    positions = np.fromiter((acc.index[tid] for tid in paired), dtype=np.int64, count=len(paired))
    columns = {arm: a.columns(positions) for arm, a in acc.arms.items()}
    if acc.exclude_errors and acc.failed:
        paired, columns = _exclude_failed(acc, paired, positions, columns, excluded)
    excluded += unmatched_runs(
        (tid, arm, run)
        for tid in paired
        for arm, mine, other in _sides(acc.seen_runs[tid])
        for run in range(mine.bit_length())
        if mine >> run & 1 and not other >> run & 1
    )
    categories, families, critical = _labels(acc, paired, task_map)
    runs_seen = max((m.bit_count() for v in acc.seen_runs.values() for m in v[:2]), default=1)
    return PairedData(
        task_ids=paired,
        categories=categories,
        families=families,
        critical=critical,
        baseline=columns["baseline"],
        candidate=columns["candidate"],
        runs=runs_seen,
        n_tasks=len(universe),
        excluded=excluded,
        trials=trial_lookup if trial_lookup is not None else acc.first,
        tasks=task_map,
        has_families=len(set(families)) < len(families),
        failures=acc.failed,
        trials_seen=acc.trials_seen(),
        totals_of=functools.partial(acc.totals_of, paired),
    )


def _sides(masks: list[Any]) -> tuple[tuple[str, int, int], ...]:
    return (("baseline", masks[0], masks[1]), ("candidate", masks[1], masks[0]))


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


def _inventory(
    acc: Accumulated,
    task_map: Mapping[str, AblationTask],
    have_suite: bool,
    expected_ids: Iterable[str] | None,
) -> tuple[list[str], list[ExcludedItem], list[str]]:
    """The expected ids, what is excluded (unknown, missing, one-sided) and the paired ids."""
    if have_suite:
        universe, known = list(task_map), "the suite"
    elif expected_ids is not None:
        universe, known = list(dict.fromkeys(expected_ids)), "the expected ids"
    else:
        universe, known = list(acc.index), ""
    universe_set = set(universe)
    excluded = [
        ExcludedItem(task_id=tid, reason=f"unknown task id (not in {known})")
        for tid in sorted(set(acc.index) - universe_set)
    ]
    paired: list[str] = []
    for tid in sorted(universe_set):
        masks = acc.seen_runs.get(tid, [0, 0, None, False])
        has_b, has_c = masks[0] != 0, masks[1] != 0
        if not (has_b or has_c):
            excluded.append(ExcludedItem(task_id=tid, reason="missing: no result in either arm"))
        elif not has_c:
            excluded.append(ExcludedItem(task_id=tid, reason="only in baseline (no candidate result)"))
        elif not has_b:
            excluded.append(ExcludedItem(task_id=tid, reason="only in candidate (no baseline result)"))
        else:
            paired.append(tid)
    return universe, excluded, paired


def _exclude_failed(
    acc: Accumulated,
    paired: list[str],
    positions: np.ndarray,
    columns: dict[str, ArmColumns],
    excluded: list[ExcludedItem],
) -> tuple[list[str], dict[str, ArmColumns]]:
    """``on_error="exclude"``: list every dropped trial, and drop tasks left empty in an arm."""
    paired_set = set(paired)
    for tid, arm, run, status, error, *_ in sorted(acc.failed):
        if tid in paired_set:
            excluded.append(ExcludedItem(task_id=tid, run=run, reason=f"{arm} {status}: {error}"))
    empty = (columns["baseline"].runs == 0) | (columns["candidate"].runs == 0)
    if not empty.any():
        return paired, columns
    for pos in np.flatnonzero(empty):
        excluded.append(
            ExcludedItem(
                task_id=paired[int(pos)], reason="no completed trial in one arm (on_error=exclude)"
            )
        )
    keep = ~empty
    paired = [tid for tid, k in zip(paired, keep, strict=True) if k]
    return paired, {arm: a.columns(positions[keep]) for arm, a in acc.arms.items()}


def _labels(
    acc: Accumulated, paired: list[str], task_map: Mapping[str, AblationTask]
) -> tuple[list[str], list[str], np.ndarray]:
    """Category, family and critical flag of each paired task (the suite's, else the trials')."""
    categories: list[str] = []
    families: list[str] = []
    critical = np.zeros(len(paired), dtype=bool)
    for j, tid in enumerate(paired):
        task = task_map.get(tid)
        if task is not None:
            categories.append(task.category)
            families.append(task.family or tid)
            critical[j] = task.critical
        else:
            categories.append(acc.seen_runs[tid][2] or "default")
            families.append(tid)
            critical[j] = bool(acc.seen_runs[tid][3])
    return categories, families, critical


def pair_arrays(
    task_ids: Sequence[str],
    baseline_passed: np.ndarray,
    candidate_passed: np.ndarray,
    *,
    categories: Sequence[str] | None = None,
    critical: np.ndarray | None = None,
    baseline_latency: np.ndarray | None = None,
    candidate_latency: np.ndarray | None = None,
) -> PairedData:
    """Build :class:`PairedData` straight from aligned arrays (one run per task).

    This is the fast path for very large comparisons (a million tasks): no per-task objects are
    created. ``task_ids`` must be unique; they are sorted together with the arrays.
    """
    ids = np.asarray(task_ids, dtype=object)
    if len(ids) != len(baseline_passed) or len(ids) != len(candidate_passed):
        raise InputError("task_ids, baseline_passed and candidate_passed differ in length")
    order = np.argsort(ids, kind="stable")
    ids_sorted = ids[order]
    if len(ids_sorted) > 1 and bool(np.any(ids_sorted[1:] == ids_sorted[:-1])):
        dup = ids_sorted[1:][ids_sorted[1:] == ids_sorted[:-1]][0]
        raise InputError(f"duplicate task id {dup!r}")
    n = len(ids)
    ones = np.ones(n, dtype=np.int64)

    def arm(passed: np.ndarray, latency: np.ndarray | None) -> ArmColumns:
        lat = np.full(n, np.nan) if latency is None else np.asarray(latency, float)[order]
        return ArmColumns(
            passes=np.asarray(passed, dtype=np.int64)[order],
            runs=ones,
            latency=lat,
            cost=np.full(n, np.nan),
            n_trials=n,
        )

    cats = constant_column("default", n) if categories is None else [categories[i] for i in order]
    crit = np.zeros(n, dtype=bool) if critical is None else np.asarray(critical, bool)[order]
    id_list = ids_sorted.tolist()
    return PairedData(
        task_ids=id_list,
        categories=cats,
        families=id_list,
        critical=crit,
        baseline=arm(baseline_passed, baseline_latency),
        candidate=arm(candidate_passed, candidate_latency),
        runs=1,
        n_tasks=n,
        trials_seen={"baseline": n, "candidate": n},
    )
