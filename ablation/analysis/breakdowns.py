"""Paired tables and the breakdowns beyond the headline numbers.

The 2x2 classification of paired tasks, the per-category tables (with Benjamini-Hochberg
adjusted p-values, as exploratory slices), and the repeated-runs summary: per-task pass
fractions compared with a paired t and a cluster bootstrap over tasks, variance components per
arm, and the flaky tasks with a per-task exact test. Used by :mod:`ablation.analysis`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel

from ablation import stats
from ablation.analysis.factorize import sorted_codes
from ablation.analysis.pairing import PairedData
from ablation.analysis.seeding import stream
from ablation.columns import constant_value, filled
from ablation.config import CampaignConfig
from ablation.report import CategoryBreakdown, FlakyTask, Interval, PairTable, RepeatedRuns

__all__ = [
    "betting_interval",
    "categories",
    "classify",
    "ids",
    "interval",
    "pass_fractions",
    "repeated",
    "table",
    "with_ids",
]

Model = TypeVar("Model", bound=BaseModel)


def interval(result: Any, level: float, method: str | None = None) -> Interval:
    ci = result.confidence_interval
    return Interval(
        low=float(ci.low),
        high=float(ci.high),
        confidence_level=level,
        method=method or result.method,
    )


def pass_fractions(data: PairedData) -> tuple[np.ndarray, np.ndarray]:
    """Each arm's per-task pass fractions. With one run per task these are the 0/1 passes
    themselves (``int8`` views): equal numbers with no ``float64`` copy (8 MB per arm at a
    million tasks); means and differences of them are the same floats (exact integer sums)."""
    if data.runs == 1:
        return data.baseline.passes, data.candidate.passes
    return data.baseline.fraction, data.candidate.fraction


def classify(data: PairedData) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Masks (both_pass, regression, improvement, both_fail) over the paired tasks."""
    baseline_fractions, candidate_fractions = pass_fractions(data)
    regression = candidate_fractions < baseline_fractions
    improvement = candidate_fractions > baseline_fractions
    tie = ~(regression | improvement)
    both_pass = tie & (baseline_fractions >= 0.5)
    both_fail = tie & (baseline_fractions < 0.5)
    return both_pass, regression, improvement, both_fail


def table(masks: tuple[np.ndarray, ...], select: np.ndarray | None = None) -> PairTable:
    counts = [int(np.count_nonzero(m if select is None else m & select)) for m in masks]
    return PairTable(
        both_pass=counts[0], regressions=counts[1], improvements=counts[2], both_fail=counts[3]
    )


def ids(data: PairedData, mask: np.ndarray) -> list[str]:
    """The ids of the tasks ``mask`` (one flag per task) selects, in task order.

    ``itertools.compress`` over the flags' bytes picks them in one C loop: 14 ms for a quarter
    of 10⁶ ids, against 63 ms for a look-up per selected index. A selection of a few ids (or
    none, as critical regressions in a suite without critical tasks) reads only those.
    """
    return picked(data.task_ids, mask)


def picked(items: Sequence[str] | np.ndarray, mask: np.ndarray) -> list[str]:
    """The ``items`` that ``mask`` (one flag per item) selects, in order (see :func:`ids`)."""
    flags = np.asarray(mask, dtype=np.bool_)
    if flags.sum() >= 4096:
        return list(compress(items, flags.view(np.uint8).tobytes()))
    return list(map(items.__getitem__, np.flatnonzero(flags).tolist()))


def with_ids(model: Model, **lists: list[str]) -> Model:
    """``model`` (built with empty id lists) holding the id ``lists`` of :func:`ids` as they are.

    Validating them in the model's constructor would check every id again and copy the list: at
    10⁶ tasks 55 ms per million ids. They are lists of ``str`` already (the paired task ids,
    validated when read), so they are set with ``model_copy(update=...)``.
    """
    return model.model_copy(update=lists)


def betting_interval(d: np.ndarray, level: float, seed: int) -> Interval:
    """The fixed-n betting interval for the mean per-task difference (valid with deterministic
    tasks): the headline with repeated runs, and each category's interval there."""
    ci = stats.bounded_mean_interval(d, confidence_level=level, rng=stream(seed, "uplift-betting"))
    return Interval(
        low=ci.low, high=ci.high, confidence_level=level,
        method="fixed-n betting interval for the mean per-task difference (task = unit)",
    )


def _category_codes(labels: list[str] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(labels, return_inverse=True)`` without sorting a million strings."""
    one = constant_value(labels)[0] if isinstance(labels, np.ndarray) else len(set(labels)) == 1
    if one:  # the usual case: one category (or none given: a constant column of "default")
        return np.asarray(labels[:1], dtype=str), filled(0, np.int64, len(labels))
    names, (codes,) = sorted_codes([np.asarray(labels, dtype=object)])
    return names, codes


def categories(
    data: PairedData,
    masks: tuple[np.ndarray, ...],
    config: CampaignConfig,
    overall: tuple[list[str], list[str]] | None = None,
) -> list[CategoryBreakdown]:
    """One breakdown per category. ``overall``: the report's regression and improvement ids
    (``ids`` of ``masks[1]`` and ``masks[2]``), from which each category's are picked; a single
    category (every task) copies them (a copy, not the same list: a caller editing one report
    list must not edit another)."""
    names, codes = _category_codes(data.categories)
    out: list[CategoryBreakdown] = []
    # Each category's ids are picked from the report's lists (a few of 10⁶ tasks, usually) by
    # the categories of their tasks, not from every task's id once per category.
    overall = overall or (ids(data, masks[1]), ids(data, masks[2]))
    listed = codes[masks[1]], codes[masks[2]]
    baseline_fractions, candidate_fractions = pass_fractions(data)
    single = len(names) == 1  # every task: whole arrays, no selection
    for code, name in enumerate(names.tolist()):
        select: Any = slice(None) if single else codes == code
        tab = table(masks, None if single else select)
        if single:
            regressions, improvements = overall[0].copy(), overall[1].copy()
        else:
            regressions = picked(overall[0], listed[0] == code)
            improvements = picked(overall[1], listed[1] == code)
        n = tab.n
        if data.runs > 1:  # the headline's interval with repeated runs, on the category's tasks
            level = config.confidence_level
            d = candidate_fractions[select] - baseline_fractions[select]
            ci = betting_interval(d, level, config.seed) if n else None
        else:
            # the headline's rule: Tango, at a wider level below 30 discordant pairs
            ci = interval(
                stats.headline_difference_interval(
                    tab.both_pass,
                    tab.regressions,
                    tab.improvements,
                    tab.both_fail,
                    confidence_level=config.confidence_level,
                ),
                config.confidence_level,
            )
        breakdown = CategoryBreakdown(
            category=name,
            n=n,
            table=tab,
            regressions=[],
            improvements=[],
            baseline_pass_rate=float(np.mean(baseline_fractions[select])),
            candidate_pass_rate=float(np.mean(candidate_fractions[select])),
            uplift=float(np.mean(candidate_fractions[select] - baseline_fractions[select])),
            ci=ci,
            mcnemar_pvalue=float(stats.mcnemar(tab.regressions, tab.improvements).pvalue),
        )
        out.append(with_ids(breakdown, regressions=regressions, improvements=improvements))
    if len(out) > 1:  # exploratory slices: Benjamini-Hochberg (STATISTICS.md section 8)
        adjusted = stats.adjust_pvalues([c.mcnemar_pvalue or 1.0 for c in out], method="bh")
        out = [
            c.model_copy(update={"adjusted_pvalue": float(p)})
            for c, p in zip(out, adjusted, strict=True)
        ]
    return out


def _run_outcomes(passes: np.ndarray, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every run as ``1.0`` (pass) or ``0.0``, each task's passes first, and each run's task index.

    The same arrays as concatenating ``np.repeat([1.0, 0.0], [p, r − p])`` task by task, made
    with a few array operations instead of one ``np.repeat`` per task.
    """
    runs = np.asarray(runs, dtype=np.int64)
    groups = np.repeat(np.arange(runs.size), runs)
    position = np.arange(groups.size) - np.repeat(np.cumsum(runs) - runs, runs)  # within its task
    passed = position < np.repeat(np.asarray(passes, dtype=np.int64), runs)
    return passed.astype(np.float64), groups


def _components(data: PairedData) -> dict[str, Any]:
    """Between- and within-task variance of each arm's trial outcomes (``None``: not estimable)."""
    components: dict[str, Any] = {}
    for arm, cols in (("baseline", data.baseline), ("candidate", data.candidate)):
        try:
            components[arm] = stats.variance_components(*_run_outcomes(cols.passes, cols.runs))
        except ValueError:  # fewer than two tasks, or no task with two runs: not estimable
            components[arm] = None
    return components


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first row of each distinct row, index of each row's distinct row)`` of non-negative ints.

    As ``np.unique(rows, axis=0, return_index=True, return_inverse=True)`` (distinct rows in
    lexicographic order), with each row read as one integer in base ``max + 1``, which keeps
    that order: ``np.unique`` of integers is ~50x faster than of rows.
    """
    base = int(rows.max(initial=0)) + 1
    if base ** rows.shape[1] >= 2**63:  # too large a base for int64 (~55,000 runs a task)
        _, first, which = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        return first, which.reshape(-1)
    codes = np.zeros(rows.shape[0], dtype=np.int64)
    for column in rows.T:
        codes = codes * base + column
    _, first, which = np.unique(codes, return_index=True, return_inverse=True)
    return first, which


def _flaky(data: PairedData) -> list[FlakyTask]:
    """Tasks with mixed outcomes inside an arm, each with Fisher's exact test between the arms.

    Tasks share a few tables (passes and runs of both arms), so each distinct table is tested once.
    """
    b, c = data.baseline, data.candidate
    mixed_b, mixed_c = (b.passes > 0) & (b.passes < b.runs), (c.passes > 0) & (c.passes < c.runs)
    at = np.flatnonzero(mixed_b | mixed_c)
    if not at.size:
        return []
    tables = np.column_stack([b.passes[at], b.runs[at], c.passes[at], c.runs[at]]).astype(np.int64)
    first, which = _distinct_rows(tables)
    tests = [stats.fisher_exact_test(*row) for row in tables[first].tolist()]
    return [
        FlakyTask(
            task_id=data.task_ids[i],
            baseline_passes=bp,
            baseline_runs=br,
            candidate_passes=cp,
            candidate_runs=cr,
            flaky_in=[arm for arm, mixed in (("baseline", in_b), ("candidate", in_c)) if mixed],
            pvalue=float(tests[t].pvalue),
            method=tests[t].method,
        )
        for i, t, (bp, br, cp, cr), in_b, in_c in zip(
            at.tolist(),
            which.tolist(),
            tables.tolist(),
            mixed_b[at].tolist(),
            mixed_c[at].tolist(),
            strict=True,
        )
    ]


def repeated(data: PairedData, config: CampaignConfig) -> tuple[RepeatedRuns, list[FlakyTask]]:
    level = config.confidence_level
    baseline_fractions, candidate_fractions = data.baseline.fraction, data.candidate.fraction
    b, c = data.baseline, data.candidate
    t = stats.paired_t_test(baseline_fractions, candidate_fractions, confidence_level=level)
    components = _components(data)
    cluster = stats.cluster_bootstrap(
        baseline_fractions,
        candidate_fractions,
        clusters=np.asarray(data.families),
        n_resamples=config.n_resamples,
        confidence_level=level,
        rng=stream(config.seed, "repeated"),
    )
    vb, vc = components["baseline"], components["candidate"]

    def part(comp: Any, attr: str) -> float | None:
        return None if comp is None else float(getattr(comp, attr))

    def deff(comp: Any) -> float | None:
        return None if comp is None else float(stats.design_effect(data.runs, comp.icc))

    return (
        RepeatedRuns(
            runs=data.runs,
            n_tasks=len(data.task_ids),
            mean_difference=float(t.estimate),
            t_ci=interval(t, level),
            t_pvalue=float(t.pvalue),
            cluster_ci=interval(cluster, level),
            icc_baseline=part(vb, "icc"),
            icc_candidate=part(vc, "icc"),
            design_effect_baseline=deff(vb),
            design_effect_candidate=deff(vc),
            between_var_baseline=part(vb, "between"),
            within_var_baseline=part(vb, "within"),
            between_var_candidate=part(vc, "between"),
            within_var_candidate=part(vc, "within"),
            stable_regressions=ids(data, (b.passes == b.runs) & (c.passes == 0)),
            stable_improvements=ids(data, (b.passes == 0) & (c.passes == c.runs)),
        ),
        _flaky(data),
    )
