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
from typing import Any

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
        cost_total: Sum of the cost of every counted trial that reports one (``None``: none did).
        cost_trials: How many counted trials reported a cost.
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
    cost_total: float | None = None
    cost_trials: int = 0
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
        tasks: The suite's tasks by id, when known (drill-downs show the expected output).
        has_families: True when some tasks share a family (clusters larger than one task).
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
    tasks: Mapping[str, AblationTask] = field(default_factory=dict)
    has_families: bool = False


class _Growable:
    """A float64 column that doubles its capacity as tasks arrive (bounded, no Python floats)."""

    __slots__ = ("data",)

    def __init__(self) -> None:
        self.data = np.zeros(1024)

    def add(self, i: int, value: float) -> None:
        if i >= self.data.size:
            grown = np.zeros(max(self.data.size * 2, i + 1))
            grown[: self.data.size] = self.data
            self.data = grown
        self.data[i] += value


class _ArmAccumulator:
    """Streaming per-task sums of one arm; memory grows with tasks, not with trials."""

    SCALARS = ("passes", "runs", "trials", "lat_sum", "lat_n", "cost_sum", "cost_n")

    def __init__(self) -> None:
        self.cols = {name: _Growable() for name in self.SCALARS}
        self.quality: dict[str, tuple[_Growable, _Growable]] = {}
        self.metrics: dict[str, tuple[_Growable, _Growable]] = {}
        self.quality_errors: dict[str, int] = {}
        self.errors = self.timeouts = self.retried = 0

    def _pair(self, table: dict[str, tuple[_Growable, _Growable]], name: str) -> tuple[_Growable, _Growable]:
        if name not in table:
            table[name] = (_Growable(), _Growable())
        return table[name]

    def add(self, i: int, t: Any, exclude_errors: bool) -> None:
        cols = self.cols
        cols["trials"].add(i, 1)
        completed = t.status == "completed"
        self.errors += t.status == "error"
        self.timeouts += t.status == "timeout"
        self.retried += t.attempts > 1
        for name in t.quality_errors:
            self.quality_errors[name] = self.quality_errors.get(name, 0) + 1
            self._pair(self.quality, name)
        if not completed and exclude_errors:
            return
        cols["runs"].add(i, 1)
        if completed:
            cols["passes"].add(i, bool(t.passed))
            if t.latency_s is not None:
                cols["lat_sum"].add(i, t.latency_s)
                cols["lat_n"].add(i, 1)
            for name, value in t.quality.items():
                total, count = self._pair(self.quality, name)
                total.add(i, value)
                count.add(i, 1)
        if t.cost is not None:
            cols["cost_sum"].add(i, t.cost)
            cols["cost_n"].add(i, 1)
        metrics = dict(getattr(t, "metrics", None) or {})
        tokens = getattr(t, "tokens", None)
        if tokens is not None:
            metrics["tokens"] = tokens
        for name, value in metrics.items():
            total, count = self._pair(self.metrics, name)
            total.add(i, float(value))
            count.add(i, 1)

    def columns(self, index: np.ndarray) -> ArmColumns:
        def take(col: _Growable) -> np.ndarray:
            data = col.data
            if data.size <= index.max(initial=-1):
                data = np.concatenate([data, np.zeros(index.max() + 1 - data.size)])
            return data[index]

        def mean(pair: tuple[_Growable, _Growable]) -> np.ndarray:
            total, count = take(pair[0]), take(pair[1])
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)

        c = self.cols
        cost_trials = int(take(c["cost_n"]).sum())
        return ArmColumns(
            passes=take(c["passes"]).astype(np.int64),
            runs=take(c["runs"]).astype(np.int64),
            latency=mean((c["lat_sum"], c["lat_n"])),
            cost=mean((c["cost_sum"], c["cost_n"])),
            quality={name: mean(pair) for name, pair in sorted(self.quality.items())},
            quality_errors=dict(self.quality_errors),
            metrics={name: mean(pair) for name, pair in sorted(self.metrics.items())},
            cost_total=float(take(c["cost_sum"]).sum()) if cost_trials else None,
            cost_trials=cost_trials,
            n_trials=int(take(c["trials"]).sum()),
            errors=self.errors,
            timeouts=self.timeouts,
            retried=self.retried,
        )


def _error_text(t: Any) -> str:
    error = getattr(t, "error", None)
    if error:
        return str(error)
    return str(getattr(t, "error_type", None) or t.status)


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
        keep_trials: Keep each task's first-run trials for drill-downs.
        trial_lookup: Instead of keeping trials, a mapping ``(task_id, arm) -> TaskResult``
            queried for the drill-downs only (e.g. a lazy view of the store).

    Returns:
        The paired columns.

    Raises:
        InputError: if two results share ``(task_id, arm, run)``.
    """
    index: dict[str, int] = {}
    arms = {"baseline": _ArmAccumulator(), "candidate": _ArmAccumulator()}
    # Per task: [baseline runs seen, candidate runs seen (bit masks), category, critical]
    # - a few small objects per task, not per trial.
    seen_runs: dict[str, list[Any]] = {}
    first: dict[tuple[str, str], Any] = {}
    failed: list[tuple[str, str, int, str, str]] = []
    exclude_errors = on_error == "exclude"
    for t in results:
        tid, arm = t.task_id, t.arm
        i = index.setdefault(tid, len(index))
        masks = seen_runs.setdefault(tid, [0, 0, None, False])
        side, bit = (0 if arm == "baseline" else 1), 1 << t.run
        if masks[side] & bit:
            raise InputError(f"duplicate result for task {tid!r}, arm {arm}, run {t.run}")
        masks[side] |= bit
        arms[arm].add(i, t, exclude_errors)
        masks[2] = masks[2] or t.category
        masks[3] = masks[3] or bool(t.critical)
        if t.status != "completed":
            failed.append((tid, arm, t.run, t.status, _error_text(t)))
        if keep_trials and ((tid, arm) not in first or t.run < first[(tid, arm)].run):
            first[(tid, arm)] = t

    task_map = {t.task_id: t for t in tasks} if tasks is not None else {}
    if tasks is not None:
        universe, known = list(task_map), "the suite"
    elif expected_ids is not None:
        universe, known = list(dict.fromkeys(expected_ids)), "the expected ids"
    else:
        universe, known = list(index), ""
    universe_set = set(universe)
    excluded = [
        ExcludedItem(task_id=tid, reason=f"unknown task id (not in {known})")
        for tid in sorted(set(index) - universe_set)
    ]
    paired: list[str] = []
    for tid in sorted(universe_set):
        masks = seen_runs.get(tid, [0, 0, None, False])
        has_b, has_c = masks[0] != 0, masks[1] != 0
        if not (has_b or has_c):
            excluded.append(ExcludedItem(task_id=tid, reason="missing: no result in either arm"))
        elif not has_c:
            excluded.append(ExcludedItem(task_id=tid, reason="only in baseline (no candidate result)"))
        elif not has_b:
            excluded.append(ExcludedItem(task_id=tid, reason="only in candidate (no baseline result)"))
        else:
            paired.append(tid)
    positions = np.fromiter((index[tid] for tid in paired), dtype=np.int64, count=len(paired))
    columns = {arm: acc.columns(positions) for arm, acc in arms.items()}
    if exclude_errors and failed:
        paired_set = set(paired)
        for tid, arm, run, status, error in sorted(failed):
            if tid in paired_set:
                excluded.append(ExcludedItem(task_id=tid, run=run, reason=f"{arm} {status}: {error}"))
        empty = (columns["baseline"].runs == 0) | (columns["candidate"].runs == 0)
        if empty.any():
            for pos in np.flatnonzero(empty):
                excluded.append(
                    ExcludedItem(
                        task_id=paired[int(pos)], reason="no completed trial in one arm (on_error=exclude)"
                    )
                )
            keep = ~empty
            paired = [tid for tid, k in zip(paired, keep, strict=True) if k]
            positions = positions[keep]
            columns = {arm: acc.columns(positions) for arm, acc in arms.items()}
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
            categories.append(seen_runs[tid][2] or "default")
            families.append(tid)
            critical[j] = bool(seen_runs[tid][3])
    runs_seen = max((m.bit_count() for v in seen_runs.values() for m in v[:2]), default=1)
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
        trials=trial_lookup if trial_lookup is not None else first,
        tasks=task_map,
        has_families=len(set(families)) < len(families),
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
