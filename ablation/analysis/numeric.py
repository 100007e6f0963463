"""Paired comparison of a numeric per-task field (a score in [0, 1], a BLEU, a reward).

When the ``--field`` of ``ablation compare`` holds numbers rather than verdicts, each task's value
(the mean over its runs) is paired across the arms and ``d = candidate − baseline`` is analysed:
the mean difference with its paired-t interval (:func:`ablation.stats.paired_t_test`, the same
as ``scipy.stats.ttest_rel(candidate, baseline)``), the Wilcoxon signed-rank test and the sign
test. A task *regressed* when its value fell by more than ``regression_delta``, *improved* when
it rose by more than that. The gate fails when the mean decrease is significant beyond the delta:
the one-sided paired t test of ``d + delta < 0`` at ``alpha``.

Assumptions: tasks are the unit (runs are averaged first); only tasks present in both arms are
paired, and the others are counted and named, never dropped silently.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel, ConfigDict

from ablation.schema import TaskResult
from ablation.stats import paired_t_test, sign_test, wilcoxon_signed_rank

__all__ = ["NumericComparison", "compare_numeric", "task_means"]


class NumericComparison(BaseModel):
    """The paired analysis of one numeric field (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str
    n_pairs: int
    baseline_mean: float
    candidate_mean: float
    mean_difference: float
    ci_low: float
    ci_high: float
    confidence_level: float
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
    return NumericComparison(
        field=field,
        n_pairs=len(ids),
        baseline_mean=float(x.mean()),
        candidate_mean=float(y.mean()),
        mean_difference=float(d.mean()),
        ci_low=float(t.confidence_interval.low),
        ci_high=float(t.confidence_interval.high),
        confidence_level=confidence_level,
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
    lines = [
        f"numeric field {c.field!r}: {c.n_pairs} paired tasks",
        f"mean baseline {c.baseline_mean:.4g}, candidate {c.candidate_mean:.4g}, difference "
        f"{c.mean_difference:+.4g} ({c.confidence_level:.0%} CI [{c.ci_low:.4g}, {c.ci_high:.4g}], "
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
