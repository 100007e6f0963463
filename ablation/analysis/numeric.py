"""Paired comparison of a numeric per-task field (a score in [0, 1], a BLEU, a reward).

When the ``--field`` of ``ablation compare`` holds numbers rather than verdicts, each task's value
(the mean over its runs) is paired across the arms and ``d = candidate − baseline`` is analysed:
the mean difference with its paired-t interval at ``confidence_level``
(:func:`ablation.stats.paired_t_test`, the same as ``scipy.stats.ttest_rel(candidate, baseline)``),
shown from :data:`ablation.stats.MEAN_DIFFERENCE_MIN_N` pairs as in the report (below, skewed
per-task differences make it under-cover; ``ci_note`` says so), the Wilcoxon signed-rank test and
the sign test. A task *regressed* when its value fell by more than ``regression_delta``, *improved* when
it rose by more than that. The gate fails when the mean decrease is significant beyond the delta:
the one-sided paired t test of ``d + delta < 0`` at ``alpha``.

Assumptions: tasks are the unit (runs are averaged first); only tasks present in both arms are
paired, and the others are counted and named, never dropped silently.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from ablation.schema import TaskResult
from ablation.stats import MEAN_DIFFERENCE_MIN_N, paired_t_test, sign_test, wilcoxon_signed_rank

__all__ = ["NumericComparison", "compare_numeric", "numeric_holm", "numeric_output", "task_means"]


class NumericComparison(BaseModel):
    """The paired analysis of one numeric field (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str
    n_pairs: int
    baseline_mean: float
    candidate_mean: float
    mean_difference: float
    ci_low: float | None
    ci_high: float | None
    confidence_level: float
    ci_note: str | None = None
    t_pvalue: float
    wilcoxon_pvalue: float
    sign_pvalue: float
    regression_delta: float
    regressions: list[str]
    improvements: list[str]
    only_baseline: list[str]
    only_candidate: list[str]
    gate_pvalue: float
    verdict: str

    @property
    def exit_code(self) -> int:
        """0 when the gate holds, 2 when it fails."""
        return 0 if self.verdict == "pass" else 2


def task_means(results: Iterable[TaskResult], field: str) -> dict[str, float]:
    """Each task's mean of ``quality[field]`` over its runs."""
    sums: dict[str, list[float]] = defaultdict(list)
    for r in results:
        if field in r.quality:
            sums[r.task_id].append(r.quality[field])
    return {task: float(np.mean(values)) for task, values in sums.items()}


def compare_numeric(
    baseline: dict[str, float],
    candidate: dict[str, float],
    *,
    field: str,
    regression_delta: float = 0.0,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
) -> NumericComparison:
    """Compare per-task values of the two arms (see the module docstring)."""
    ids = [t for t in baseline if t in candidate]
    if len(ids) < 2:
        raise ValueError(f"a numeric comparison needs at least 2 paired tasks, got {len(ids)}")
    x = np.array([baseline[t] for t in ids])
    y = np.array([candidate[t] for t in ids])
    t = paired_t_test(x, y, confidence_level=confidence_level)
    gate = paired_t_test(x, y + regression_delta, alternative="less")
    d = y - x
    shown = len(ids) >= MEAN_DIFFERENCE_MIN_N
    note = None if shown else (
        f"no interval for the mean difference below {MEAN_DIFFERENCE_MIN_N} pairs ({len(ids)} "
        "here): skewed per-task differences make the t interval under-cover; see the Wilcoxon "
        "and sign tests"
    )
    return NumericComparison(
        field=field,
        n_pairs=len(ids),
        baseline_mean=float(x.mean()),
        candidate_mean=float(y.mean()),
        mean_difference=float(d.mean()),
        ci_low=float(t.confidence_interval.low) if shown else None,
        ci_high=float(t.confidence_interval.high) if shown else None,
        confidence_level=confidence_level,
        ci_note=note,
        t_pvalue=t.pvalue,
        wilcoxon_pvalue=wilcoxon_signed_rank(x, y).pvalue,
        sign_pvalue=sign_test(x, y).pvalue,
        regression_delta=regression_delta,
        regressions=[i for i, v in zip(ids, d, strict=True) if v < -regression_delta],
        improvements=[i for i, v in zip(ids, d, strict=True) if v > regression_delta],
        only_baseline=[i for i in baseline if i not in candidate],
        only_candidate=[i for i in candidate if i not in baseline],
        gate_pvalue=gate.pvalue,
        verdict="fail" if gate.pvalue < alpha else "pass",
    )


def render_numeric(c: NumericComparison) -> str:
    """A short plain-text report of a numeric comparison."""
    ci = (
        f"{100 * c.confidence_level:g}% CI [{c.ci_low:.4g}, {c.ci_high:.4g}]"
        if c.ci_low is not None and c.ci_high is not None
        else str(c.ci_note)
    )
    lines = [
        f"numeric field {c.field!r}: {c.n_pairs} paired tasks",
        f"mean baseline {c.baseline_mean:.4g}, candidate {c.candidate_mean:.4g}, difference "
        f"{c.mean_difference:+.4g} ({ci}, "
        f"paired t p = {c.t_pvalue:.3g}; Wilcoxon p = {c.wilcoxon_pvalue:.3g}; sign test p = "
        f"{c.sign_pvalue:.3g})",
        f"regressions (drop > {c.regression_delta:g}): {', '.join(c.regressions) or 'none'}",
        f"improvements (rise > {c.regression_delta:g}): {', '.join(c.improvements) or 'none'}",
    ]
    if c.only_baseline or c.only_candidate:
        lines.append(f"unpaired: baseline only {c.only_baseline}, candidate only {c.only_candidate}")
    lines.append(f"gate (no significant mean drop beyond {c.regression_delta:g}): {c.verdict.upper()} "
                 f"(one-sided p = {c.gate_pvalue:.3g})")
    return "\n".join(lines)


def numeric_holm(results: list[NumericComparison], names: list[str]) -> dict[str, Any]:
    """Holm across several candidates' claims of improvement (one-sided paired t, H1 better).

    Each candidate's own gate stays unadjusted (it fails when significant); Holm controls the
    family-wise error of "candidate X is better" claims when several AFTER files are compared.
    """
    from ablation.stats import adjust_pvalues

    better = [
        c.t_pvalue / 2 if c.mean_difference > 0 else 1 - c.t_pvalue / 2 for c in results
    ]
    holm = [float(x) for x in adjust_pvalues(better, method="holm")]
    return {
        "note": (
            f"Holm across {len(results)} candidates (claims of improvement: one-sided paired t, "
            "H1 candidate better):"
        ),
        "rows": [
            {"name": n, "pvalue": float(p), "holm_pvalue": h}
            for n, p, h in zip(names, better, holm, strict=True)
        ],
    }


def numeric_output(results: list[NumericComparison], names: list[str], as_json: bool) -> str:
    """What ``compare --field`` prints: each comparison, and with several AFTER files the Holm
    summary of their claims of improvement (one JSON document with ``as_json``)."""
    import json

    summary = numeric_holm(results, names) if len(results) > 1 else None
    if as_json:
        docs = [r.model_dump() for r in results]
        doc = docs[0] if summary is None else {
            "candidates": dict(zip(names, docs, strict=True)), "summary": summary,
        }
        return json.dumps(doc, indent=2)
    lines = [render_numeric(r) for r in results]
    if summary is not None:
        lines.append(summary["note"])
        lines += [
            f"  {row['name']}: p = {row['pvalue']:.3g}, Holm p = {row['holm_pvalue']:.3g}"
            for row in summary["rows"]
        ]
    return "\n".join(lines)
