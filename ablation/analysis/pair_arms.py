"""Pair two arms given as :class:`~ablation.columns.TrialColumns`, vectorised with numpy.

The library's one pairing path (campaigns, stores, ``compare``, ``report_from_results`` and the
sequential sink; an arm may be empty): the inventory (unknown ids, missing ids, one-sided tasks),
the duplicate check on ``(task, arm, run)``, the ``on_error="exclude"`` listing and the per-task
means, computed with id codes (:func:`~ablation.analysis.factorize.object_codes`), ``argsort``
and ``bincount`` instead of a Python loop per trial. Tests check it against an independent
per-trial object path (tests/helpers/pairing_oracle.py) on random campaigns, to the byte of
the report's JSON.

Row order matters where "the first" is taken: a task's category is the first non-empty one met
with the baseline's rows before the candidate's, in row order."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from ablation.analysis.accumulate import ArmColumns, signed_counts, tool_call_counts
from ablation.analysis.arm_totals import column_totals
from ablation.analysis.factorize import (
    TrialKeys,
    code_adders,
    first_occurrences,
    first_rows_of,
    object_codes,
    trial_keys,
    unicode_ids,
)
from ablation.analysis.pairing import PairedData, shown_categories, stored_counts, unmatched_runs
from ablation.columns import (
    STATUS_CODES,
    TrialColumns,
    constant_column,
    constant_value,
    failed_trials,
    filled,
    known_rows,
    unknown,
)
from ablation.errors import InputError
from ablation.report import ExcludedItem
from ablation.schema import AblationTask, TaskResult

__all__ = ["pair_columns"]

_COMPLETED, _ARMS = STATUS_CODES["completed"], ("baseline", "candidate")


@runtime_checkable
class _Locatable(Protocol):
    """A trial lookup that can find rows with the pairing's keys (``ResultLookup``)."""

    def located(
        self, columns: Mapping[str, TrialColumns], locate: Callable[[list[str], str], NDArray[np.int64]]
    ) -> Mapping[tuple[str, str], TaskResult]: ...


def _locate(
    uniq: NDArray[np.object_], keys: Sequence[TrialKeys], task_ids: list[str], arm: str
) -> NDArray[np.int64]:
    """:func:`~ablation.analysis.factorize.first_rows_of` ``task_ids`` in ``arm``."""
    return first_rows_of(uniq, keys[_ARMS.index(arm)] if arm in _ARMS else None, task_ids)


def _check_duplicates(arms: Sequence[TrialColumns], keys: Sequence[TrialKeys]) -> None:
    """Raise on the first row (in input order) repeating an earlier ``(task, arm, run)``."""
    offset = 0
    found: tuple[int, int, int, int] | None = None  # (global row, arm index, row, earlier row)
    for a, arm_keys in enumerate(keys):
        repeat = arm_keys.first_repeat()
        if repeat is not None and (found is None or offset + repeat[0] < found[0]):
            found = (offset + repeat[0], a, *repeat)
        offset += len(arm_keys.sorted)
    if found is None:
        return
    _, a, row, earlier = found
    cols = arms[a]
    where = ""
    if cols.line is not None:
        where = (
            f" ({cols.source}, line {int(cols.line[row])}; first at line {int(cols.line[earlier])})"
        )
    raise InputError(
        f"duplicate result for task {str(cols.task_id[row])!r}, arm {_ARMS[a]}, "
        f"run {int(cols.run[row])}{where}"
    )


def _arm_columns(
    cols: TrialColumns, code: NDArray[np.int64], size: int, exclude: bool
) -> dict[str, Any]:
    """Per-task sums of one arm over every task code."""
    completed = cols.status == _COMPLETED
    every = filled(True, np.bool_, len(code))  # a constant: its counts stay constant
    counted = completed if exclude else every
    count, total = code_adders(code, size)

    def summed(values: NDArray[np.float64], mask: NDArray[np.bool_]) -> tuple[Any, Any]:
        keep = known_rows(values, mask)
        if keep is None:  # a column nobody filled in: no sums to add up
            return filled(0.0, np.float64, size), filled(0, np.int64, size)
        return total(values, keep), count(keep)

    quality_names = {n for n, v in cols.quality.items() if known_rows(v, completed) is not None}
    quality_names |= {n for n, v in cols.quality_errors.items() if v.any()}
    n = len(code)
    quality = {
        name: summed(cols.quality.get(name, filled(np.nan, np.float64, n)), completed)
        for name in sorted(quality_names)
    }
    metric_values = dict(cols.metrics)
    if not (unknown(cols.tokens) or np.isnan(cols.tokens).all()):
        old = metric_values.get("tokens")
        metric_values["tokens"] = (
            cols.tokens if old is None else np.where(np.isnan(cols.tokens), old, cols.tokens)
        )
    metric_sums = {
        name: summed(values, counted)
        for name, values in sorted(metric_values.items())
        if known_rows(values, counted) is not None
    }
    metrics = {name: tool_call_counts(name, pair, metric_sums) for name, pair in metric_sums.items()}
    return {
        "trials": count(every),
        "runs": count(counted),
        "passes": count(completed & cols.passed),
        "latency": summed(cols.latency_s, completed),
        "cost": summed(cols.cost, counted),
        "quality": quality,
        "metrics": metrics,
        "quality_errors": {
            name: int(cols.quality_errors[name].sum())
            for name in cols.quality_errors
            if cols.quality_errors[name].any()
        },
        "errors": int(np.count_nonzero(cols.status == STATUS_CODES["error"])),
        "timeouts": int(np.count_nonzero(cols.status == STATUS_CODES["timeout"])),
        "retried": 0 if cols.attempts is None else int(np.count_nonzero(cols.attempts > 1)),
    }


def _take(sums: Mapping[str, Any], codes: NDArray[np.int64]) -> ArmColumns:
    """The :class:`ArmColumns` of the tasks at ``codes`` (sorted distinct task codes).

    The means are divided in place in the per-task totals of ``sums`` (or in their gathered
    copies): ``sums`` is spent, its totals are not to be read again.
    """
    # every task paired (the usual case): a slice, no gather of each per-task array
    index: Any = slice(None) if len(codes) == len(sums["trials"]) else codes

    def mean(pair: tuple[NDArray[np.float64], NDArray[Any]]) -> NDArray[np.float64]:
        total, count = pair[0][index], pair[1][index]
        if not count.any():  # no value at all: a constant NaN column, read only
            return filled(np.nan, np.float64, len(codes))
        if count.min() == 1 and count.max() == 1:  # one value a task: the totals are the means
            return total  # (perhaps a read-only view of the trials' column: code_adders)
        np.divide(total, count, out=total, where=count > 0)
        total[count == 0] = np.nan
        return total

    cost_sum, cost_n = sums["cost"][0][index], sums["cost"][1][index]
    cost_trials = int(cost_n.sum())
    cost_total = float(cost_sum.sum()) if cost_trials else None  # before the mean divides it
    return ArmColumns(
        passes=signed_counts(sums["passes"][index]),
        runs=signed_counts(sums["runs"][index]),
        latency=mean(sums["latency"]),
        cost=mean(sums["cost"]),
        quality={name: mean(pair) for name, pair in sums["quality"].items()},
        quality_errors=dict(sums["quality_errors"]),
        metrics={name: mean(pair) for name, pair in sums["metrics"].items()},
        cost_total=cost_total,
        cost_trials=cost_trials,
        n_trials=int(sums["trials"][index].sum()),
        errors=sums["errors"],
        timeouts=sums["timeouts"],
        retried=sums["retried"],
    )


def pair_columns(
    baseline: TrialColumns,
    candidate: TrialColumns,
    *,
    tasks: Sequence[AblationTask] | None = None,
    expected_ids: Iterable[str] | None = None,
    on_error: str = "fail",
    trial_lookup: Mapping[tuple[str, str], TaskResult] | None = None,
) -> PairedData:
    """Pair two arms' trial columns by task.

    Args:
        baseline: The baseline's trials (its ``arm`` is not checked: the position decides).
        candidate: The candidate's trials.
        tasks: The suite, if known: it fixes the inventory, categories and critical flags.
        expected_ids: Without a suite, the ids that should be present (missing ones are listed).
        on_error: ``"fail"``: errors and timeouts count as failed trials; ``"exclude"``: they
            are dropped (and listed), and a task left with no trial in an arm is excluded.
        trial_lookup: ``(task_id, arm) -> first-run TaskResult`` for the drill-downs (queried
            for the few trials shown); without it the drill-downs show no trials.

    Returns:
        The paired columns.

    Raises:
        InputError: if two rows of one arm share ``(task_id, run)`` (naming file and lines when
            the columns carry them).
    """
    arms = (baseline, candidate)
    uniq, codes = object_codes([a.task_id for a in arms])  # the distinct ids, sorted
    width = 1 + max((int(a.run.max()) for a in arms if len(a.run)), default=0)
    keys = [trial_keys(code, a.run, width) for a, code in zip(arms, codes, strict=True)]
    _check_duplicates(arms, keys)
    if isinstance(trial_lookup, _Locatable):
        trial_lookup = trial_lookup.located(
            dict(zip(_ARMS, arms, strict=True)), functools.partial(_locate, uniq, keys)
        )
    size = len(uniq)
    exclude = on_error == "exclude"
    summed = [_arm_columns(a, c, size, exclude) for a, c in zip(arms, codes, strict=True)]
    seen = [sums["trials"] for sums in summed]  # trials per task code
    runs = int(max(seen[0].max(initial=0), seen[1].max(initial=0))) or 1
    task_map = {t.task_id: t for t in tasks} if tasks is not None else {}
    universe, excluded, paired = _inventory(uniq, seen, task_map, tasks is not None, expected_ids)
    failures = [f for arm, cols in zip(_ARMS, arms, strict=True) for f in failed_trials(cols, arm)]
    if exclude:
        dropped, paired = _excluded_by_errors(uniq, paired, summed, failures)
        excluded += dropped
    columns = [_take(s, paired) for s in summed]
    task_ids = uniq if len(paired) == size else uniq[paired]  # an object array: no list the collector walks
    excluded += _unmatched(arms, keys, uniq, paired)
    categories, families, critical = _labels(arms, codes, size, paired, task_ids, task_map)
    return PairedData(
        task_ids=task_ids,
        categories=shown_categories(categories),
        families=families,
        critical=critical,
        baseline=columns[0],
        candidate=columns[1],
        runs=runs,
        n_tasks=universe,
        excluded=excluded,
        trials=trial_lookup if trial_lookup is not None else {},
        tasks=task_map,
        has_families=bool(task_map) and len(set(families)) < len(families),  # else ids: distinct
        failures=failures,
        scorer_failures={(arm, n): (c.task_id[f], c.run[f]) for arm, c in zip(_ARMS, arms, strict=True) for n, f in sorted(c.quality_errors.items()) if f.any()},
        trials_seen={arm: len(cols) for arm, cols in zip(_ARMS, arms, strict=True)},
        totals_of=functools.partial(column_totals, arms, codes, uniq, paired, exclude),
        cost_units={arm: cols.cost_units for arm, cols in zip(_ARMS, arms, strict=True)},
        stored_of=functools.partial(stored_counts, codes, uniq),
    )


def _excluded_by_errors(
    uniq: NDArray[np.object_],
    paired: NDArray[np.int64],
    sums: Sequence[Mapping[str, Any]],
    failures: Sequence[tuple[Any, ...]],
) -> tuple[list[ExcludedItem], NDArray[np.int64]]:
    """With ``on_error="exclude"``: the failed trials of paired tasks, and the paired tasks left
    without a completed trial in an arm, which leave ``paired`` (returned without them)."""
    paired_ids = set(uniq[paired].tolist())
    excluded = [
        ExcludedItem(task_id=tid, run=run, reason=f"{arm} {status}: {error}")
        for tid, arm, run, status, error, *_ in sorted(failures)
        if tid in paired_ids
    ]
    empty = (sums[0]["runs"][paired] == 0) | (sums[1]["runs"][paired] == 0)
    excluded += [
        ExcludedItem(task_id=str(uniq[code]), reason="no completed trial in one arm (on_error=exclude)")
        for code in paired[empty]
    ]
    return excluded, paired[~empty]


def _inventory(
    uniq: NDArray[np.object_],
    seen: list[NDArray[np.int64]],
    task_map: Mapping[str, AblationTask],
    have_suite: bool,
    expected_ids: Iterable[str] | None,
) -> tuple[int, list[ExcludedItem], NDArray[np.int64]]:
    """Size of the inventory, what is excluded (unknown, missing, one-sided), paired codes."""
    universe: NDArray[Any]  # the ids of the inventory, sorted
    listed: list[str] | None = None
    same = False
    if have_suite or expected_ids is not None:
        lookup = task_map if have_suite else dict.fromkeys(expected_ids or ())
        listed = list(lookup)
        # The usual campaign: the arms hold exactly the listed ids (distinct, as many, each
        # listed), so the inventory is the arms' own sorted ids, with no fixed-width copies to
        # sort and search (~200 MB at 1e6 tasks).
        same = len(listed) == len(uniq) and all(map(lookup.__contains__, uniq.tolist()))
    if listed is not None and not same:
        known = "the suite" if have_suite else "the expected ids"
        universe = np.unique(unicode_ids(np.asarray(listed, dtype=object)))
        text = unicode_ids(uniq)  # fixed width, to search and sort like the universe
        excluded = [
            ExcludedItem(task_id=str(tid), reason=f"unknown task id (not in {known})")
            for tid in text[~np.isin(text, universe)].tolist()
        ]
        pos = np.minimum(np.searchsorted(text, universe), max(len(text) - 1, 0))
        present = (text[pos] == universe) if len(text) else np.zeros(len(universe), dtype=bool)
        code = np.where(present, pos, -1)
        size = len(listed)
    else:  # the inventory is the arms' ids: code ``i`` of the inventory is id code ``i``
        code, excluded, size, universe = None, [], len(uniq), uniq
    if code is None:
        has_b, has_c = seen[0] > 0, seen[1] > 0
    elif len(uniq):
        has_b, has_c = (np.where(code >= 0, s[code] > 0, False) for s in seen)
    else:
        has_b = has_c = code >= 0
    both = has_b & has_c
    for j in np.flatnonzero(~both).tolist():
        tid = str(universe[j])
        if not (has_b[j] or has_c[j]):
            reason = "missing: no result in either arm"
        elif not has_c[j]:
            reason = "only in baseline (no candidate result)"
        else:
            reason = "only in candidate (no baseline result)"
        excluded.append(ExcludedItem(task_id=tid, reason=reason))
    paired = np.flatnonzero(both) if code is None else code[both]
    return size, excluded, np.asarray(paired, dtype=np.int64)


def _unmatched(
    arms: Sequence[TrialColumns],
    keys: Sequence[TrialKeys],
    uniq: NDArray[np.object_],
    paired: NDArray[np.int64],
) -> list[ExcludedItem]:
    """Runs of a paired task that only one arm has (see :func:`unmatched_runs`)."""
    if keys[0].sorted is keys[1].sorted or np.array_equal(keys[0].sorted, keys[1].sorted):
        return []
    is_paired = np.zeros(len(uniq), dtype=bool)
    is_paired[paired] = True
    found: list[tuple[str, str, int]] = []
    for side in (0, 1):
        mine, other = keys[side].sorted, keys[1 - side].sorted
        codes, runs = np.divmod(mine, keys[side].width)
        if len(other):
            at = np.minimum(np.searchsorted(other, mine), len(other) - 1)
            lone = np.flatnonzero(is_paired[codes] & (other[at] != mine))
        else:
            lone = np.flatnonzero(is_paired[codes])
        found += [(str(uniq[codes[i]]), _ARMS[side], int(runs[i])) for i in lone.tolist()]
    return unmatched_runs(found)


def _labels(
    arms: Sequence[TrialColumns],
    codes: list[NDArray[np.int64]],
    size: int,
    paired: NDArray[np.int64],
    task_ids: NDArray[np.object_],
    task_map: Mapping[str, AblationTask],
) -> tuple[list[str] | NDArray[np.object_], list[str] | NDArray[np.object_], NDArray[np.bool_]]:
    """Category, family and critical flag of each paired task (the suite's, else the trials')."""
    if task_map:
        chosen = [task_map[tid] for tid in task_ids if tid in task_map]
        if len(chosen) == len(task_ids):
            return (
                [t.category for t in chosen],
                [t.family or t.task_id for t in chosen],
                np.array([t.critical for t in chosen], dtype=np.bool_),
            )
    category = np.full(size, None, dtype=object)
    given_any = False
    for cols, code in reversed(list(zip(arms, codes, strict=True))):
        labelled = cols.category
        if labelled is None or constant_value(labelled) == (True, None):
            continue  # no category given
        truthy = labelled.astype(bool)  # truthiness, as bool(c) per row
        if not truthy.any():
            continue
        given_any = True
        given: Any = slice(None) if truthy.all() else np.flatnonzero(truthy)
        first_codes, rows = first_occurrences(code[given])
        category[first_codes] = labelled[given][rows]
    critical = np.zeros(size, dtype=bool)
    for cols, code in zip(arms, codes, strict=True):
        if cols.critical is not None and cols.critical.any():
            critical[code[cols.critical]] = True
    cats: list[str] | NDArray[np.object_] = constant_column("default", len(paired))
    if given_any:
        labels = category if len(paired) == size else category[paired]
        if (labelled := labels.astype(bool)).all():
            cats = labels.tolist()
        elif labelled.any():
            cats = np.where(labelled, labels, "default").tolist()  # truthiness, as ``c or "default"``
    return cats, task_ids, critical[paired]  # a task's family is its id: the same list

