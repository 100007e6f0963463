"""Paired comparison of a numeric per-task field (a score in [0, 1], a BLEU, a reward).

When the ``--field`` of ``ablation compare`` holds numbers rather than verdicts, each task's value
(the mean over its runs) is paired across the arms and ``d = candidate − baseline`` is analysed:
the mean difference with its paired-t interval at ``confidence_level``
(:func:`ablation.stats.paired_t_test`, the same as ``scipy.stats.ttest_rel(candidate, baseline)``),
shown from :data:`ablation.stats.MEAN_DIFFERENCE_MIN_N` pairs as in the report (below, skewed
per-task differences make it under-cover; ``ci_note`` says so), the Wilcoxon signed-rank test and
the sign test. A task *regressed* when its value fell by more than ``regression_delta``, *improved* when
it rose by more than that; for a field named as a lower-is-better metric (``cost``, ``latency_s``,
``tokens``: :data:`~ablation.analysis.metric_margins.LOWER_IS_BETTER`, by the last part of its
path) the other way round, and the regression gate tests a rise.

Two release gates (:class:`~ablation.report.GateResult`, named and worded as the report's gates of
:mod:`ablation.analysis.builtin_gates` and :mod:`ablation.analysis.completeness`; judged by
:mod:`ablation.analysis.numeric_verdict`, which holds the result model too):

- ``"complete comparison"`` (``GatePolicy.require_complete``): fails when an expected task has no
  value in an arm (ids on one side only; with ``expected_ids``, an expected id missing from either
  file; a task whose every run is an error) or when an arm has a value for fewer than
  ``GatePolicy.min_completed`` of its expected trials (for every expected task, the runs seen in
  either arm, at least one: a failed trial has no value). Ids outside ``expected_ids`` are
  ``unknown``: neither paired nor missing.
- ``"no significant regression"`` (``GatePolicy.no_significant_regression``): the one-sided
  paired t test of ``d + regression_delta < 0`` (lower-is-better: ``d - regression_delta > 0``)
  at ``alpha``, on its own (not adjusted). When all ``d`` are equal their t is undefined (``0/0``,
  or ``±inf`` and p = 0 at 2 tasks), its p-values ``None`` and ``t_note`` says why; the gate then
  passes when no task is worse by more than ``regression_delta`` (a candidate equal to its
  baseline, or better by the same amount on every task) and is ``"inconclusive"`` when every task
  is worse by the same amount (no test can weigh one constant against noise it never saw). A
  pass beside an interval of the mean difference wholly past ``-regression_delta`` (shown at a
  ``confidence_level`` below ``1 - 2 alpha``) says so in the gate's evidence.

A gate turned off is ``"off"``, naming the ``GatePolicy`` field that turned it off and what it would
have said; the verdict is ``"fail"`` when a gate is neither ``"pass"`` nor ``"off"`` (``verdict_of``).

Assumptions: tasks are the unit (runs are averaged first); only tasks present in both arms are
paired, and the others are counted and named, never dropped silently.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ablation.analysis.gate_status import verdict_of
from ablation.analysis.metric_margins import LOWER_IS_BETTER
from ablation.analysis.numeric_verdict import (
    GATE_NAMES,
    NumericComparison,
    completeness_gate,
    regression_gate,
)
from ablation.columns import TrialColumns, filled, results_to_columns
from ablation.config import GatePolicy
from ablation.schema import ARMS, TaskResult
from ablation.stats import MEAN_DIFFERENCE_MIN_N, paired_t_test, sign_test, wilcoxon_signed_rank
from ablation.stats._ties import common_difference

__all__ = ["GATE_NAMES", "ArmRuns", "NumericComparison", "arm_runs", "compare_numeric", "numeric_holm", "task_means"]


def task_means(trials: TrialColumns | Iterable[TaskResult], field: str) -> dict[str, float]:
    """Each task's mean of ``quality[field]`` over its runs with a value (one arm's columns, or
    its results read as columns), tasks in the order of their first value: the mean is
    ``np.mean`` of the task's values in row order (rows of one length reduced as one block, row
    by row, which is ``np.mean`` of each row), and one value is itself."""
    cols = _as_columns(trials)
    values = cols.quality.get(field, filled(np.nan, np.float64, len(cols)))
    tasks, code = _codes(cols.task_id[given := ~np.isnan(values)])
    values = values[given]
    if len(tasks) < len(values):  # some task has several values
        counts = np.bincount(code, minlength=len(tasks))
        ordered, starts = values[np.argsort(code, kind="stable")], np.cumsum(counts) - counts
        values = np.empty(len(tasks))
        for k in np.unique(counts).tolist():
            which = np.flatnonzero(counts == k)
            block = ordered[starts[which, None] + np.arange(k)]
            values[which] = block[:, 0] if k == 1 else block.mean(axis=1)
    return dict(zip(tasks, values.tolist(), strict=True))


@dataclass(frozen=True)
class ArmRuns:
    """One arm's trials as the completed share of :func:`compare_numeric` counts them.

    Attributes:
        tasks: The arm's distinct task ids, in the order of their first row.
        code: Per row, the index of its task in ``tasks``.
        run: Per row, its run.
        valued: Per row, whether it has a value of the field.
    """

    tasks: list[str]
    code: NDArray[np.int64]
    run: NDArray[np.int64]
    valued: NDArray[np.bool_]


def arm_runs(trials: TrialColumns | Iterable[TaskResult], field: str) -> ArmRuns:
    """One arm's trials (as :func:`task_means` takes them): per row its task, its run (any
    status) and whether it has a value of ``field``."""
    cols = _as_columns(trials)
    valued = ~np.isnan(cols.quality.get(field, filled(np.nan, np.float64, len(cols))))
    tasks, code = _codes(cols.task_id)
    return ArmRuns(tasks, code, cols.run.astype(np.int64, copy=False), valued)


def _as_columns(trials: TrialColumns | Iterable[TaskResult]) -> TrialColumns:
    return trials if isinstance(trials, TrialColumns) else results_to_columns(list(trials), "baseline")


def _codes(ids: NDArray[np.object_]) -> tuple[list[str], NDArray[np.int64]]:
    """The distinct ids in order of first appearance, and each row's index among them (found by
    hashing: ``np.unique`` would sort the ``str`` objects, about a second a million)."""
    items = ids.tolist()
    if len(items) < 2 or bool(np.all(ids[1:] > ids[:-1])):  # sorted, each once: nothing to hash
        return items, np.arange(len(items), dtype=np.int64)
    rank = {task: i for i, task in enumerate(dict.fromkeys(items))}
    return list(rank), np.fromiter(map(rank.__getitem__, items), np.int64, len(items))


def compare_numeric(
    baseline: dict[str, float], candidate: dict[str, float], *, field: str, regression_delta: float = 0.0,
    alpha: float = 0.05, confidence_level: float = 0.95, expected_ids: Sequence[str] | None = None,
    runs: tuple[ArmRuns, ArmRuns] | None = None, policy: GatePolicy | None = None,
) -> NumericComparison:
    """Compare per-task values of the two arms and judge the gates (see the module docstring).

    Args:
        baseline: Task -> value (:func:`task_means`) of the baseline; ``candidate`` likewise.
        expected_ids: Ids that must all be present in both arms (``--expected-ids``).
        runs: Each arm's :class:`ArmRuns` (:func:`arm_runs`), for the completed share of trials (without it each
            task with a value is one completed trial of one expected).
        policy: The gates' settings (``require_complete``, ``min_completed``,
            ``no_significant_regression``); default :class:`~ablation.config.GatePolicy`.

    Raises:
        ValueError: fewer than 2 paired tasks.
    """
    policy = policy or GatePolicy()
    seen = _in_order(runs[0].tasks if runs else [], baseline, runs[1].tasks if runs else [], candidate)
    universe = list(dict.fromkeys(str(i) for i in expected_ids)) if expected_ids is not None else seen
    inside = set(universe) if expected_ids is not None else None
    ids = [t for t in baseline if t in candidate and (inside is None or t in inside)]
    if len(ids) < 2:
        raise ValueError(f"a numeric comparison needs at least 2 paired tasks, got {len(ids)}")
    x = np.fromiter(map(baseline.__getitem__, ids), np.float64, len(ids))
    y = np.fromiter(map(candidate.__getitem__, ids), np.float64, len(ids))
    t = paired_t_test(x, y, confidence_level=confidence_level)
    lower = field.rsplit(".", 1)[-1] in LOWER_IS_BETTER
    gate = paired_t_test(x, y - regression_delta, alternative="greater") if lower else paired_t_test(
        x, y + regression_delta, alternative="less")  # fmt: skip
    d = -(y - x) if lower else y - x  # > 0: better
    same = common_difference(x, y)  # a t of zero variance is undefined
    flat = None if same is None else f"all {len(ids)} per-task differences are equal ({same:+.4g}, up to the round-off of the values), so their variance is 0 and the t statistic is undefined (0/0, or an infinite t with p = 0 at any number of tasks)"
    shown = flat is None and len(ids) >= MEAN_DIFFERENCE_MIN_N
    note = None if shown else "no interval for the mean difference: zero variance" if flat else (
        f"no interval for the mean difference below {MEAN_DIFFERENCE_MIN_N} pairs ({len(ids)} "
        "here): skewed per-task differences make the t interval under-cover; see the Wilcoxon "
        "and sign tests"
    )  # fmt: skip
    c = NumericComparison(
        field=field, n_pairs=len(ids), baseline_mean=float(x.mean()), candidate_mean=float(y.mean()),
        mean_difference=t.estimate, ci_low=float(t.confidence_interval.low) if shown else None,
        ci_high=float(t.confidence_interval.high) if shown else None, confidence_level=confidence_level,
        ci_note=note, t_pvalue=None if flat else t.pvalue, t_note=flat, wilcoxon_pvalue=wilcoxon_signed_rank(x, y).pvalue,
        sign_pvalue=sign_test(x, y).pvalue, regression_delta=regression_delta, lower_is_better=lower,
        regressions=_where(ids, d < -regression_delta), improvements=_where(ids, d > regression_delta),
        only_baseline=_outside(baseline, candidate), only_candidate=_outside(candidate, baseline),
        gate_pvalue=None if flat else gate.pvalue, verdict="pass", n_expected=len(universe),
        missing_baseline=_outside(universe, baseline), missing_candidate=_outside(universe, candidate),
        unknown=[] if inside is None else _outside(seen, inside),
        trials=_trials(universe, (baseline, candidate), runs), alpha=alpha,
    )  # fmt: skip
    gates = [completeness_gate(c, policy), regression_gate(c, policy)]
    return c.model_copy(update={"gates": gates, "verdict": verdict_of(gates)})


def _in_order(*groups: Iterable[str]) -> list[str]:
    """The distinct ids of ``groups`` in order of first appearance. A group known to add nothing
    costs no pass: a dict whose keys were all seen (one set comparison), a list equal to the ids
    found so far (the candidate's tasks when they are the baseline's)."""
    found: dict[str, None] = {}
    for group in groups:
        if isinstance(group, dict) and group.keys() <= found.keys():
            continue
        if isinstance(group, list) and len(group) == len(found) and group == list(found):
            continue
        found.update(dict.fromkeys(group))
    return list(found)


def _where(ids: list[str], mask: NDArray[np.bool_]) -> list[str]:
    """The ids where ``mask`` holds, in order."""
    return [ids[i] for i in np.flatnonzero(mask).tolist()]


def _outside(ids: Iterable[str], other: Collection[str]) -> list[str]:
    """The ids of ``ids`` not in ``other``, in order (none, in the common case, by one C pass)."""
    if all(map(other.__contains__, ids)):
        return []
    return list(itertools.filterfalse(other.__contains__, ids))


def _trials(
    universe: list[str], values: tuple[dict[str, float], dict[str, float]], runs: tuple[ArmRuns, ArmRuns] | None
) -> dict[str, list[int]]:
    """Per arm ``[trials with a value, expected trials]``: for every expected task, the runs seen
    in either arm (at least one; the same total for both arms).

    Each arm's rows of expected tasks become the integers ``task * width + run code`` (the runs
    of both arms numbered together), so the distinct (task, run) trials are one ``np.unique``.
    """
    if runs is None:
        return {arm: [sum(map(v.__contains__, universe)), len(universe)] for arm, v in zip(ARMS, values, strict=True)}
    places: dict[str, int] = {}
    run_codes = np.unique(np.concatenate([r.run for r in runs]), return_inverse=True)[1]
    width = int(run_codes.max(initial=0)) + 1
    trials, done, start = [], [], 0
    for r in runs:
        at = _positions(universe, r.tasks, places)[r.code]
        keys = at * width + run_codes[start : start + len(r.run)]
        start += len(r.run)
        expected = at >= 0
        trials.append(keys[expected])
        done.append(_distinct(keys[expected & r.valued]).size)
    seen = _distinct(np.concatenate(trials))
    total = seen.size + len(universe) - _distinct(seen // width).size  # no run seen: one trial
    return {arm: [n, total] for arm, n in zip(ARMS, done, strict=True)}


def _positions(universe: list[str], tasks: list[str], places: dict[str, int]) -> NDArray[np.int64]:
    """Each of ``tasks``' index in ``universe`` (-1 outside it); ``places``: ``universe``'s
    index, built on first use. Tasks that begin the universe in its order (an arm's own tasks
    when the universe is the ids seen) need no lookup."""
    if len(tasks) <= len(universe) and universe[: len(tasks)] == tasks:
        return np.arange(len(tasks), dtype=np.int64)
    if not places:
        places.update(zip(universe, range(len(universe)), strict=True))
    return np.fromiter(map(places.get, tasks, itertools.repeat(-1)), np.int64, len(tasks))


def _distinct(keys: NDArray[np.int64]) -> NDArray[np.int64]:
    """The distinct ``keys``, sorted (by a sort: ``np.unique``'s hashing is slower on integers)."""
    keys = np.sort(keys)
    return keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if keys.size else keys


def numeric_holm(results: list[NumericComparison], names: list[str]) -> dict[str, Any]:
    """Holm across several candidates' claims of improvement (one-sided paired t, H1 better).

    Better is a rise, or a drop for a lower-is-better field. Each candidate's own gate stays
    unadjusted (it fails when significant); Holm controls the family-wise error of "candidate X is
    better" claims when several AFTER files are compared.
    """
    from ablation.stats import adjust_pvalues

    better = [1.0 if c.t_pvalue is None else c.t_pvalue / 2 if (
        c.mean_difference < 0 if c.lower_is_better else c.mean_difference > 0) else 1 - c.t_pvalue / 2
        for c in results]  # fmt: skip
    holm, flat = [float(x) for x in adjust_pvalues(better, method="holm")], sum(c.t_pvalue is None for c in results)
    return {
        "note": f"Holm across {len(results)} candidates (claims of improvement: one-sided paired t, "
        f"H1 candidate better{f'; {flat} with an undefined t (zero variance) at p = 1, no claim' if flat else ''}):",
        "rows": [{"name": n, "pvalue": float(p), "holm_pvalue": h} for n, p, h in zip(names, better, holm, strict=True)],
    }  # fmt: skip
