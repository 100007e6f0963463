"""The paired data the analysis works on: the inventory, exclusions and per-task columns.

Pairing is by **task**: with ``runs > 1`` each arm's runs of a task are averaged first, and run
j of the baseline is never paired with run j of the candidate (STATISTICS.md section 5). The
result is columnar (numpy arrays indexed like ``task_ids``), so a million-task report needs no
per-task Python objects.

Inventory rules (nothing dropped silently): a task with results in one arm only, a result whose
id is not in the suite (or the expected ids), an expected id with no result at all, and, with
``on_error="exclude"``, an errored or timed-out trial, are each listed in ``excluded`` with the
reason. Given the configured runs (the replay of a sequential campaign,
:func:`~ablation.analysis.sequential.apply_sequential`), a task with fewer trials stored in an
arm (interrupted part way) is **partly run** (:func:`leave_out_partly_run`): listed, and out of
the pairs like a task with results in one arm only. Without them, a run that one arm has and
the other lacks is listed and kept in the task's mean (:func:`unmatched_runs`).

Restricting the data to some of its tasks (:func:`restrict_tasks`, :func:`leave_out_partly_run`)
returns a new :class:`PairedData`; the per-task arrays are indexed, never written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ablation.analysis.accumulate import ArmColumns
from ablation.analysis.arm_totals import ArmTotals
from ablation.columns import CostUnits, constant_value
from ablation.report import ExcludedItem
from ablation.schema import NAME_SHOWN, AblationTask, TaskResult, shown_name

__all__ = [
    "PARTLY_RUN_PREFIX",
    "ArmColumns",
    "PairedData",
    "leave_out_partly_run",
    "partly_run",
    "restrict_tasks",
    "shown_categories",
    "stored_counts",
    "unmatched_runs",
]

#: Start of the excluded reason of a task with fewer than the configured runs stored in an arm.
PARTLY_RUN_PREFIX = "partly run"
#: Start of the excluded reason of a task left without a completed trial (``on_error="exclude"``).
_NO_COMPLETED = "no completed trial in one arm"


def shown_categories(labels: list[str] | NDArray[np.object_]) -> list[str] | NDArray[np.object_]:
    """The categories as the report names them: each longer than
    :data:`~ablation.schema.NAME_SHOWN` characters cut there, marked and with the digest of its
    whole text (:func:`~ablation.schema.shown_name`). A category has no length limit, but the
    report lists it in its categories, drill-downs and notes. ``labels`` is returned as it is when
    no category is that long (a constant column is checked by its one value).
    """
    constant, value = constant_value(labels) if isinstance(labels, np.ndarray) else (False, None)
    distinct: set[str] = {str(value)} if constant else set(labels)
    cut = {c: shown_name(c, "category") for c in distinct if len(c) > NAME_SHOWN}
    if not cut:
        return labels
    return [cut.get(c, c) for c in labels]


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
        scorer_failures: ``(arm, scorer) -> (task ids, runs)`` of every trial seen (paired or
            not) on which that quality scorer failed (the trials' columns record only that it
            failed; the message is read through ``trials``).
        trials_seen: Trials seen per arm over every task.
        totals_of: Each arm's :class:`~ablation.analysis.arm_totals.ArmTotals` over the given
            task ids (trials, errors, retries, scorer errors, cost), counted from the trials of
            those tasks, for restricting the data to a subset of its tasks; ``None`` when the
            columns hold every count (one completed trial per task, no cost).
        cost_units: Per arm, the distinct ``(currency, source)`` of every trial with a cost,
            of every task and run (:attr:`~ablation.columns.TrialColumns.cost_units`).
        stored_of: The trials stored per task of each arm (every status, paired or not), as
            ``(baseline, candidate)`` arrays aligned with the given ids (0 for an id without
            trials); ``None``: only the paired tasks' ``runs`` are known.
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
    scorer_failures: Mapping[tuple[str, str], tuple[NDArray[np.object_], NDArray[np.int64]]] = field(
        default_factory=dict
    )
    trials_seen: dict[str, int] = field(default_factory=dict)
    totals_of: Callable[[Collection[str]], dict[str, ArmTotals]] | None = None
    cost_units: Mapping[str, CostUnits] = field(default_factory=dict)
    stored_of: Callable[[Sequence[str]], tuple[np.ndarray, np.ndarray]] | None = None


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


def stored_counts(
    codes: Sequence[NDArray[np.int64]], uniq: NDArray[np.object_], task_ids: Sequence[str]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Trials stored per arm (every status, before exclusions) of each of ``task_ids``, counted
    from each arm's rows' task codes (``codes``, indexing ``uniq``: the sorted distinct ids);
    :attr:`PairedData.stored_of` of :func:`~ablation.analysis.pair_arms.pair_columns`."""
    ids = np.asarray(list(task_ids), dtype=object)
    if not len(uniq) or not len(ids):
        return np.zeros(len(ids), dtype=np.int64), np.zeros(len(ids), dtype=np.int64)
    pos = np.minimum(np.searchsorted(uniq, ids), len(uniq) - 1)
    found = uniq[pos] == ids
    base, cand = (
        np.where(found, np.bincount(code, minlength=len(uniq))[pos], 0).astype(np.int64)
        for code in codes
    )
    return base, cand


def _rows(values: Any, idx: np.ndarray) -> Any:
    """The entries of a per-task column (an array or a list) at ``idx``."""
    return values[idx] if isinstance(values, np.ndarray) else [values[i] for i in idx]


def _arm(columns: ArmColumns, keep: np.ndarray, counts: dict[str, Any], scorers: set[str]) -> ArmColumns:
    """``columns`` at the tasks ``keep`` with the whole-arm ``counts`` replaced."""
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


def _scorers(data: PairedData, keep: np.ndarray, totals: dict[str, ArmTotals] | None) -> set[str]:
    """Scorers with a score or a scorer error in the kept tasks (either arm): a scorer that only
    trials of dropped tasks used is not part of the report."""
    arms = (data.baseline, data.candidate)
    names = {n for a in arms for n, v in a.quality.items() if not np.isnan(v[keep]).all()}
    if totals is None:
        return names | {n for a in arms for n in a.quality}
    return names | {n for t in totals.values() for n in t.quality_errors}


def _counts(columns: ArmColumns, keep: np.ndarray, totals: ArmTotals | None) -> dict[str, Any]:
    """Every whole-arm count recounted over the kept tasks (from ``totals`` when known)."""
    if totals is None:
        return {"n_trials": int(columns.runs[keep].sum())}
    return {
        "errors": totals.errors,
        "timeouts": totals.timeouts,
        "retried": totals.retried,
        "quality_errors": totals.quality_errors,
        "cost_total": totals.cost_total,
        "cost_trials": totals.cost_trials,
        "n_trials": totals.n_trials,
    }


def restrict_tasks(
    data: PairedData, keep: set[str], dropped: Sequence[str], reason: str
) -> PairedData:
    """``data`` with only the tasks in ``keep``, every count recounted over them.

    The ``dropped`` tasks are listed in ``excluded`` with ``reason`` (their other items leave),
    and their trials leave every count: the columns, the failures, the arm summaries and the
    trials seen, so the report is as if they had never run.
    """
    idx = np.flatnonzero(
        np.fromiter((tid in keep for tid in data.task_ids), dtype=bool, count=len(data.task_ids))
    )
    dropped_set = set(dropped)
    excluded = [e for e in data.excluded if e.task_id not in dropped_set]
    excluded.extend(ExcludedItem(task_id=tid, reason=reason) for tid in sorted(dropped_set))
    totals = data.totals_of(keep) if data.totals_of is not None else None
    scorers = _scorers(data, idx, totals)
    arms = {
        arm: _arm(cols, idx, _counts(cols, idx, (totals or {}).get(arm)), scorers)
        for arm, cols in (("baseline", data.baseline), ("candidate", data.candidate))
    }
    seen = {arm: int(cols.runs.sum()) for arm, cols in arms.items()}  # the kept tasks' runs
    return _subset(
        data, idx, arms, excluded,
        failures=[f for f in data.failures if f[0] in keep],
        scorer_failures={
            key: (ids[kept], runs[kept]) for key, (ids, runs) in data.scorer_failures.items()
            if (kept := np.fromiter((t in keep for t in ids.tolist()), bool, len(ids))).any()
        },
        trials_seen={arm: t.seen for arm, t in totals.items()} if totals is not None else seen,
        totals_of=None,
    )  # fmt: skip


def _subset(
    data: PairedData, idx: np.ndarray, arms: dict[str, ArmColumns], excluded: list[ExcludedItem],
    **changes: Any,
) -> PairedData:
    """``data`` with the per-task rows at ``idx``, the ``arms`` and ``excluded`` given, and
    ``changes`` to any other field."""
    families = _rows(data.families, idx)
    return dataclasses.replace(
        data,
        task_ids=_rows(data.task_ids, idx),
        categories=_rows(data.categories, idx),
        families=families,
        critical=data.critical[idx],
        baseline=arms["baseline"],
        candidate=arms["candidate"],
        excluded=excluded,
        has_families=len(set(families)) < len(families),
        **changes,
    )


def partly_run(data: PairedData, runs: int) -> dict[str, tuple[int, int]]:
    """The tasks with fewer than ``runs`` trials stored in an arm, with what each arm stored.

    Looked at: the paired tasks and those excluded for want of a completed trial
    (``on_error="exclude"``); a task absent from an arm is already listed as such.

    Returns:
        ``task_id -> (baseline trials stored, candidate trials stored)``, in id order.
    """
    if runs <= 1:  # a task with a trial in each arm has its one run
        return {}
    # a paired task counting every run stores every run: only the others need a look
    low = (np.asarray(data.baseline.runs) < runs) | (np.asarray(data.candidate.runs) < runs)
    maybe = np.flatnonzero(low)
    ids = [str(data.task_ids[i]) for i in maybe.tolist()]
    if data.stored_of is None:  # only the paired tasks' counted runs are known
        base, cand = (np.asarray(cols.runs)[maybe] for cols in (data.baseline, data.candidate))
    else:
        ids += sorted(
            {e.task_id for e in data.excluded if e.run is None and e.reason.startswith(_NO_COMPLETED)}
        )
        base, cand = data.stored_of(ids)
    short = {
        tid: (int(b), int(c)) for tid, b, c in zip(ids, base, cand, strict=True) if min(b, c) < runs
    }
    return dict(sorted(short.items()))


def _replaced(item: ExcludedItem) -> bool:
    """Whether a partly run task's listing replaces ``item``: one of its unmatched runs, or the
    whole task's ``on_error="exclude"`` item."""
    return item.reason.startswith("unmatched run") or (
        item.run is None and item.reason.startswith(_NO_COMPLETED)
    )


def leave_out_partly_run(data: PairedData, runs: int) -> PairedData:
    """``data`` without the tasks that have fewer than ``runs`` trials stored in an arm.

    Such a task was interrupted part way: its run counts were set by the interruption, not fixed
    in advance, so it is no pair (a campaign's pairs have the configured runs in each arm). It
    is listed once in ``excluded`` (``"partly run: baseline k of N runs, ..."``, replacing its
    unmatched runs and any ``on_error="exclude"`` item of the whole task), leaves the per-task
    columns and the arms' paired counts (trials, cost), and, like a task with results in one arm
    only, stays in the whole-arm counts (trials seen, errors, timeouts, failures).

    The data's ``runs`` becomes at least ``runs``: the configured count, which the listing
    names ("2 of 3 runs"), not the most an interrupted arm stored.

    Returns:
        ``data`` itself when no task is partly run.
    """
    short = partly_run(data, runs)
    if not short:
        return data
    count = len(data.task_ids)
    idx = np.flatnonzero(np.fromiter((tid not in short for tid in data.task_ids), bool, count))
    kept = _rows(data.task_ids, idx)
    totals = data.totals_of(list(kept)) if data.totals_of is not None else None
    scorers = {n for cols in (data.baseline, data.candidate) for n in cols.quality}
    arms = {}
    for arm, cols in (("baseline", data.baseline), ("candidate", data.candidate)):
        counts: dict[str, Any] = {"n_trials": int(cols.runs[idx].sum())}
        if totals is not None:  # the paired counts, from the trials of the kept tasks
            t = totals[arm]
            counts = {"n_trials": t.n_trials, "cost_total": t.cost_total, "cost_trials": t.cost_trials}
        arms[arm] = _arm(cols, idx, counts, scorers)
    excluded = [e for e in data.excluded if e.task_id not in short or not _replaced(e)]
    excluded += [
        ExcludedItem(
            task_id=tid,
            reason=f"{PARTLY_RUN_PREFIX}: baseline {b} of {runs} runs, candidate {c} of {runs} runs",
        )
        for tid, (b, c) in short.items()
    ]
    return _subset(data, idx, arms, excluded, runs=max(data.runs, runs))
