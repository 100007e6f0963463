"""Streaming accumulation of trials into per-task columns (memory grows with tasks, not trials).

Used by :func:`ablation.analysis.pairing.pair_results`.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ablation.analysis.arm_totals import ArmTotals
from ablation.columns import constant_value, failure_fields, filled
from ablation.errors import InputError
from ablation.outputs import TOOL_CALLS_PREFIX

__all__ = ["Accumulated", "ArmColumns", "signed_counts", "tool_call_counts"]


@dataclass(frozen=True)
class ArmColumns:
    """One arm's per-task columns (aligned with :attr:`PairedData.task_ids`).

    Attributes:
        passes: Passing trials counted per task (signed integers: ``int64``, or ``int8`` 0/1
            counts when each task has one row).
        runs: Trials counted per task (after exclusions), as ``passes``.
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

    @functools.cached_property
    def fraction(self) -> np.ndarray:
        """Per-task pass fraction, computed once (read-only: the report's sections share it)."""
        out: np.ndarray = self.passes / self.runs
        out.flags.writeable = False
        return out


def signed_counts(counts: np.ndarray) -> np.ndarray:
    """``counts`` as signed integers (no wrap-around when subtracted): a constant stays a constant;
    0/1 ``uint8`` counts (a mask's own bytes: one row per task) become an ``int8`` view of them,
    not an ``int64`` copy (8 MB per arm at a million tasks); others are ``int64``."""
    constant, value = constant_value(counts)
    if constant:
        return filled(value, np.int64, len(counts))
    return counts.view(np.int8) if counts.dtype == np.uint8 else np.asarray(counts, dtype=np.int64)


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


def tool_call_counts(name: str, pair: tuple[Any, Any], metrics: Mapping[str, tuple[Any, Any]]) -> tuple[Any, Any]:
    """``(sums, counts)`` of metric ``name``; a tool call count (``tool_calls.<tool>``) is
    divided by the trials that reported usage (those with ``model_requests``): a trial with
    usage that did not call the tool called it 0 times, not an unknown number of times."""
    requests = metrics.get("model_requests")
    if requests is None or not name.startswith(TOOL_CALLS_PREFIX):
        return pair
    return pair[0], requests[1]


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
        if self.keep_trials:
            self.first.add(t)
