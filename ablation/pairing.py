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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ablation.errors import InputError
from ablation.report import ExcludedItem
from ablation.schema import AblationTask, TaskResult

__all__ = ["ArmColumns", "PairedData", "pair_arrays", "pair_results"]


@dataclass(frozen=True)
class ArmColumns:
    """One arm's per-task columns (aligned with :attr:`PairedData.task_ids`).

    Attributes:
        passes: Passing trials counted per task.
        runs: Trials counted per task (after exclusions).
        latency: Mean latency of the task's completed trials (NaN when none).
        cost: Mean cost of the task's trials that report one (NaN when none).
        quality: Per scorer, the mean score of the task's scored trials (NaN when none).
        quality_errors: Per scorer, the number of scorer errors over all the arm's trials.
        metrics: Other numeric measurements, per-task means (NaN when none).
        n_trials: Trials of this arm in the paired tasks (before exclusions).
        errors: Trials that ended in an error.
        timeouts: Trials that timed out.
        retried: Trials that needed more than one attempt.
    """

    passes: np.ndarray
    runs: np.ndarray
    latency: np.ndarray
    cost: np.ndarray
    quality: dict[str, np.ndarray] = field(default_factory=dict)
    quality_errors: dict[str, int] = field(default_factory=dict)
    metrics: dict[str, np.ndarray] = field(default_factory=dict)
    n_trials: int = 0
    errors: int = 0
    timeouts: int = 0
    retried: int = 0

    @property
    def fraction(self) -> np.ndarray:
        """Per-task pass fraction."""
        return self.passes / self.runs


@dataclass(frozen=True)
class PairedData:
    """Everything the analysis needs, paired by task.

    Attributes:
        task_ids: Sorted ids of the paired tasks.
        categories: Category of each paired task.
        families: Cluster label of each paired task (its family, or its own id).
        critical: Whether each paired task is critical.
        baseline: Baseline columns.
        candidate: Candidate columns.
        runs: Planned runs per task (the maximum seen).
        n_tasks: Size of the inventory (suite, expected ids, or ids seen).
        excluded: What was left out, with reasons.
        trials: ``(task_id, arm) -> first-run TaskResult`` for drill-downs (may be empty).
    """

    task_ids: list[str]
    categories: list[str]
    families: list[str]
    critical: np.ndarray
    baseline: ArmColumns
    candidate: ArmColumns
    runs: int
    n_tasks: int
    excluded: list[ExcludedItem] = field(default_factory=list)
    trials: Mapping[tuple[str, str], TaskResult] = field(default_factory=dict)

    @property
    def has_families(self) -> bool:
        """True when some tasks share a family (clusters larger than one task)."""
        return len(set(self.families)) < len(self.families)


def _mean_or_nan(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def _arm_columns(
    per_task: list[list[TaskResult]],
    on_error: str,
    quality_names: Sequence[str],
    metric_names: Sequence[str],
) -> ArmColumns:
    n = len(per_task)
    passes = np.zeros(n, dtype=np.int64)
    runs = np.zeros(n, dtype=np.int64)
    latency = np.full(n, np.nan)
    cost = np.full(n, np.nan)
    quality = {name: np.full(n, np.nan) for name in quality_names}
    metrics = {name: np.full(n, np.nan) for name in metric_names}
    q_errors = dict.fromkeys(quality_names, 0)
    errors = timeouts = retried = n_trials = 0
    for i, trials in enumerate(per_task):
        lat: list[float] = []
        costs: list[float] = []
        scores: dict[str, list[float]] = {name: [] for name in quality_names}
        mets: dict[str, list[float]] = {name: [] for name in metric_names}
        for t in trials:
            n_trials += 1
            errors += t.status == "error"
            timeouts += t.status == "timeout"
            retried += t.attempts > 1
            for name in t.quality_errors:
                q_errors[name] = q_errors.get(name, 0) + 1
            if t.status != "completed" and on_error == "exclude":
                continue
            runs[i] += 1
            passes[i] += bool(t.passed) and t.status == "completed"
            if t.status == "completed":
                if t.latency_s is not None:
                    lat.append(t.latency_s)
                for name, value in t.quality.items():
                    scores[name].append(value)
            if t.cost is not None:
                costs.append(t.cost)
            for name in metric_names:
                value = t.tokens if name == "tokens" else t.metrics.get(name)
                if value is not None:
                    mets[name].append(float(value))
        latency[i] = _mean_or_nan(lat)
        cost[i] = _mean_or_nan(costs)
        for name in quality_names:
            quality[name][i] = _mean_or_nan(scores[name])
        for name in metric_names:
            metrics[name][i] = _mean_or_nan(mets[name])
    return ArmColumns(
        passes=passes,
        runs=runs,
        latency=latency,
        cost=cost,
        quality=quality,
        quality_errors=q_errors,
        metrics=metrics,
        n_trials=n_trials,
        errors=errors,
        timeouts=timeouts,
        retried=retried,
    )


def pair_results(
    results: Iterable[TaskResult],
    *,
    tasks: Sequence[AblationTask] | None = None,
    expected_ids: Iterable[str] | None = None,
    on_error: str = "fail",
) -> PairedData:
    """Pair trial results by task.

    Args:
        results: Trials of both arms (any order; several runs allowed).
        tasks: The suite, if known: it fixes the inventory, categories and critical flags.
        expected_ids: Without a suite, the ids that should be present (missing ones are listed).
        on_error: ``"fail"``: errors and timeouts count as failed trials; ``"exclude"``: they are
            dropped (and listed), and a task left with no trial in an arm is excluded.

    Returns:
        The paired columns.

    Raises:
        InputError: if two results share ``(task_id, arm, run)``.
    """
    by_task: dict[str, dict[str, dict[int, TaskResult]]] = {}
    for r in results:
        runs = by_task.setdefault(r.task_id, {}).setdefault(r.arm, {})
        if r.run in runs:
            raise InputError(
                f"duplicate result for task {r.task_id!r}, arm {r.arm}, run {r.run}"
            )
        runs[r.run] = r
    task_map = {t.task_id: t for t in tasks} if tasks is not None else {}
    if tasks is not None:
        universe = list(task_map)
        known = "the suite"
    elif expected_ids is not None:
        universe = list(dict.fromkeys(expected_ids))
        known = "the expected ids"
    else:
        universe = list(by_task)
        known = ""
    excluded: list[ExcludedItem] = []
    universe_set = set(universe)
    for tid in sorted(set(by_task) - universe_set):
        excluded.append(ExcludedItem(task_id=tid, reason=f"unknown task id (not in {known})"))

    paired: list[str] = []
    for tid in sorted(universe_set):
        arms = by_task.get(tid, {})
        if not arms:
            excluded.append(ExcludedItem(task_id=tid, reason="missing: no result in either arm"))
        elif "candidate" not in arms:
            excluded.append(ExcludedItem(task_id=tid, reason="only in baseline (no candidate result)"))
        elif "baseline" not in arms:
            excluded.append(ExcludedItem(task_id=tid, reason="only in candidate (no baseline result)"))
        else:
            paired.append(tid)

    if on_error == "exclude":
        kept: list[str] = []
        for tid in paired:
            left_out = False
            for arm in ("baseline", "candidate"):
                bad = [t for t in by_task[tid][arm].values() if t.status != "completed"]
                for t in sorted(bad, key=lambda t: t.run):
                    excluded.append(
                        ExcludedItem(task_id=tid, run=t.run, reason=f"{arm} {t.status}: {t.error}")
                    )
                if len(bad) == len(by_task[tid][arm]):
                    left_out = True
            if left_out:
                excluded.append(
                    ExcludedItem(task_id=tid, reason="no completed trial in one arm (on_error=exclude)")
                )
            else:
                kept.append(tid)
        paired = kept

    per_arm = {
        arm: [sorted(by_task[tid][arm].values(), key=lambda t: t.run) for tid in paired]
        for arm in ("baseline", "candidate")
    }
    quality_names: set[str] = set()
    metric_names: set[str] = set()
    for arm_trials in per_arm.values():
        for trials in arm_trials:
            for t in trials:
                quality_names.update(t.quality, t.quality_errors)
                metric_names.update(t.metrics)
                if t.tokens is not None:
                    metric_names.add("tokens")
    q_names = sorted(quality_names)
    m_names = sorted(metric_names)
    columns = {
        arm: _arm_columns(per_arm[arm], on_error, q_names, m_names) for arm in per_arm
    }
    categories: list[str] = []
    families: list[str] = []
    critical = np.zeros(len(paired), dtype=bool)
    trials_view: dict[tuple[str, str], TaskResult] = {}
    for i, tid in enumerate(paired):
        first = {arm: per_arm[arm][i][0] for arm in per_arm}
        trials_view.update({(tid, arm): t for arm, t in first.items()})
        task = task_map.get(tid)
        if task is not None:
            categories.append(task.category)
            families.append(task.family or tid)
            critical[i] = task.critical
        else:
            category = first["baseline"].category or first["candidate"].category or "default"
            categories.append(category)
            families.append(tid)
            critical[i] = first["baseline"].critical or first["candidate"].critical
    max_runs = max((len(v) for arm in per_arm.values() for v in arm), default=1)
    return PairedData(
        task_ids=paired,
        categories=categories,
        families=families,
        critical=critical,
        baseline=columns["baseline"],
        candidate=columns["candidate"],
        runs=max_runs,
        n_tasks=len(universe),
        excluded=excluded,
        trials=trials_view,
    )


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

    cats = ["default"] * n if categories is None else [categories[i] for i in order]
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
    )
