"""The per-trial object path of pairing, kept as the oracle the array path is checked against.

:func:`pair_results` streams trial objects one by one into per-task sums (a Python loop per
trial, written independently of :func:`ablation.analysis.pair_arms.pair_columns`: the same
inventory rules, exclusions and means); :func:`report_by_objects` builds the report from it, and
:func:`pair_arrays` builds :class:`PairedData` straight from aligned verdict arrays (one run per
task), for tests that want a given 2x2 table. The library pairs only with ``pair_columns``.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ablation.analysis.accumulate import ArmColumns, tool_call_counts
from ablation.analysis.arm_totals import ArmTotals
from ablation.analysis.build import build_report
from ablation.analysis.pairing import PairedData, unmatched_runs
from ablation.columns import constant_column, failure_fields
from ablation.config import CampaignConfig, Provenance
from ablation.errors import InputError
from ablation.report import AblationReport, ExcludedItem
from ablation.schema import AblationTask, TaskResult

__all__ = ["pair_arrays", "pair_results", "report_by_objects"]


def report_by_objects(
    results: Iterable[Any],
    *,
    config: CampaignConfig | None = None,
    tasks: Sequence[AblationTask] | None = None,
    expected_ids: Iterable[str] | None = None,
    provenance: Provenance | None = None,
    trial_lookup: Mapping[tuple[str, str], TaskResult] | None = None,
) -> AblationReport:
    """The report of ``results`` paired by the object path (same arguments as
    ``report_from_results``)."""
    config = config or CampaignConfig()
    data = pair_results(
        results, tasks=tasks, expected_ids=expected_ids, on_error=config.on_error,
        keep_trials=trial_lookup is None, trial_lookup=trial_lookup,
    )  # fmt: skip
    return build_report(data, config=config, provenance=provenance)


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

    SCALARS = (
        "passes", "runs", "trials", "lat_sum", "lat_n", "cost_sum", "cost_n", "errors", "timeouts",
        "retried",
    )  # fmt: skip

    def __init__(self) -> None:
        self.cols = {name: _Growable() for name in self.SCALARS}
        self.quality: dict[str, tuple[_Growable, _Growable]] = {}
        self.metrics: dict[str, tuple[_Growable, _Growable]] = {}
        self.quality_errors: dict[str, int] = {}
        self.quality_error_cols: dict[str, _Growable] = {}
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
        cols["errors"].add(i, t.status == "error")
        cols["timeouts"].add(i, t.status == "timeout")
        cols["retried"].add(i, t.attempts > 1)
        for name in t.quality_errors:
            self.quality_errors[name] = self.quality_errors.get(name, 0) + 1
            self.quality_error_cols.setdefault(name, _Growable()).add(i, 1)
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

    def totals(self, chosen: np.ndarray, paired: np.ndarray) -> ArmTotals:
        """:class:`ArmTotals` over the task positions ``chosen``, ``paired`` of them paired."""

        def total(col: _Growable, index: np.ndarray) -> int:
            return int(_take(col, index).sum())

        c = self.cols
        cost_trials = total(c["cost_n"], paired)
        quality_errors = {n: total(col, chosen) for n, col in sorted(self.quality_error_cols.items())}
        return ArmTotals(
            seen=total(c["trials"], chosen),
            errors=total(c["errors"], chosen),
            timeouts=total(c["timeouts"], chosen),
            retried=total(c["retried"], chosen),
            quality_errors={n: k for n, k in quality_errors.items() if k},
            n_trials=total(c["trials"], paired),
            cost_total=float(_take(c["cost_sum"], paired).sum()) if cost_trials else None,
            cost_trials=cost_trials,
        )

    def columns(self, index: np.ndarray) -> ArmColumns:
        def take(col: _Growable) -> np.ndarray:
            return _take(col, index)

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
            metrics={
                name: mean(tool_call_counts(name, pair, self.metrics))
                for name, pair in sorted(self.metrics.items())
            },
            cost_total=float(take(c["cost_sum"]).sum()) if cost_trials else None,
            cost_trials=cost_trials,
            n_trials=int(take(c["trials"]).sum()),
            errors=self.errors,
            timeouts=self.timeouts,
            retried=self.retried,
        )


def _take(col: _Growable, index: np.ndarray) -> np.ndarray:
    """``col`` at ``index`` (positions past its capacity hold 0)."""
    data = col.data
    if data.size <= index.max(initial=-1):
        data = np.concatenate([data, np.zeros(index.max() + 1 - data.size)])
    return data[index]


def _failure(t: Any) -> tuple[str, str, str]:
    """:func:`~ablation.columns.failure_fields` of a failed trial object."""
    return failure_fields(
        t.status,
        getattr(t, "error", None),
        getattr(t, "error_type", None),
        getattr(t, "error_stage", None),
    )


class KeptTrials(dict[tuple[str, str], Any]):
    """``(task_id, arm) -> first-run trial``, and every run of each for :meth:`all_runs`.

    Holds references to the trials :func:`pair_results` was given (one per trial), for the
    drill-downs; only with ``keep_trials``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._runs: dict[tuple[str, str], list[Any]] = {}

    def add(self, t: Any) -> None:
        key = (t.task_id, t.arm)
        self._runs.setdefault(key, []).append(t)
        if key not in self or t.run < self[key].run:
            self[key] = t

    def all_runs(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[Any]]:
        """Every run's trial of each of ``keys`` that exists, by run."""
        return {k: sorted(self._runs[k], key=lambda r: r.run) for k in keys if k in self._runs}


class Accumulated:
    """Streaming state of :func:`pair_results`: a few small objects per task, not per trial (with
    ``keep_trials``, also a reference to each trial given, for the drill-downs)."""

    def __init__(self, exclude_errors: bool, keep_trials: bool) -> None:
        self.exclude_errors = exclude_errors
        self.keep_trials = keep_trials
        self.index: dict[str, int] = {}
        self.arms = {"baseline": _ArmAccumulator(), "candidate": _ArmAccumulator()}
        # per task: [baseline runs seen, candidate runs seen (bit masks), category, critical]
        self.seen_runs: dict[str, list[Any]] = {}
        self.first = KeptTrials()
        # per failed trial: task id, arm, run, status, "Type: message", stage, error type
        self.failed: list[tuple[str, str, int, str, str, str, str]] = []
        # per (arm, scorer): the task ids and runs of the trials the scorer failed on
        self.scorer_failed: dict[tuple[str, str], tuple[list[str], list[int]]] = {}

    def trials_seen(self) -> dict[str, int]:
        """Trials seen per arm, over every task (paired or not)."""
        return {arm: int(a.cols["trials"].data.sum()) for arm, a in self.arms.items()}

    def totals_of(self, paired: Collection[str], task_ids: Collection[str]) -> dict[str, ArmTotals]:
        """:class:`ArmTotals` per arm over ``task_ids``; ``paired``: the paired tasks' ids."""
        known = sorted({self.index[tid] for tid in task_ids if tid in self.index})
        chosen = np.asarray(known, dtype=np.int64)
        in_pairs = np.asarray(  # in id order, as the paired columns sum the cost
            [self.index[tid] for tid in sorted(set(task_ids) & set(paired)) if tid in self.index],
            dtype=np.int64,
        )
        return {arm: a.totals(chosen, in_pairs) for arm, a in self.arms.items()}

    def add(self, t: Any) -> None:
        tid, arm = t.task_id, t.arm
        i = self.index.setdefault(tid, len(self.index))
        masks = self.seen_runs.setdefault(tid, [0, 0, None, False])
        side, bit = (0 if arm == "baseline" else 1), 1 << t.run
        if masks[side] & bit:
            raise InputError(f"duplicate result for task {tid!r}, arm {arm}, run {t.run}")
        masks[side] |= bit
        self.arms[arm].add(i, t, self.exclude_errors)
        masks[2] = masks[2] or t.category
        masks[3] = masks[3] or bool(t.critical)
        if t.status != "completed":
            self.failed.append((tid, arm, t.run, t.status, *_failure(t)))
        for name in t.quality_errors:
            ids, runs = self.scorer_failed.setdefault((arm, name), ([], []))
            ids.append(tid)
            runs.append(t.run)
        if self.keep_trials:
            self.first.add(t)


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
        scorer_failures={
            key: (np.array(ids, dtype=object), np.array(runs, dtype=np.int64))
            for key, (ids, runs) in sorted(acc.scorer_failed.items())
        },
        trials_seen=acc.trials_seen(),
        totals_of=functools.partial(acc.totals_of, paired),
    )


def _sides(masks: list[Any]) -> tuple[tuple[str, int, int], ...]:
    return (("baseline", masks[0], masks[1]), ("candidate", masks[1], masks[0]))


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
