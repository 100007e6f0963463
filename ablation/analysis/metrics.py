"""Paired comparisons of continuous metrics for the report: quality scores, cost, latency.

Only pairs where both arms have a value enter a comparison; the number left out is reported
with the reason. The mean difference gets the closed-form paired t interval (``O(n)``, no
resampling), shown from :data:`ablation.stats.MEAN_DIFFERENCE_MIN_N` pairs only: below that its
coverage on skewed per-task differences (raw latencies, costs) falls short of nominal
(docs/VALIDATION.md), and ``ci_note`` says so. A Wilcoxon signed-rank test (with its
Hodges-Lehmann estimate) is given at any n; latency is also analysed on the per-task log ratio
(geometric-mean ratio with a t interval, nominal at any n), because latency is heavy tailed and
multiplicative (STATISTICS.md section 4).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ablation import stats
from ablation.config import CampaignConfig
from ablation.report import ContinuousComparison, Interval, LatencyComparison

__all__ = ["compare_continuous", "compare_latency"]


def _usable(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return ~(np.isnan(x) | np.isnan(y))


def _kept(x: np.ndarray, y: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x[keep], y[keep]``, or ``x`` and ``y`` themselves when every pair is kept.

    The usual case (every pair has a value) then makes no copies: 16 MB fewer at 10⁶ pairs, held
    through all the statistics below, which only read their inputs (a test checks they are
    unchanged after a comparison).
    """
    if keep.all():
        return x, y
    return x[keep], y[keep]


def compare_continuous(
    metric: str,
    baseline: np.ndarray,
    candidate: np.ndarray,
    *,
    config: CampaignConfig,
    left_out_reason: str,
) -> ContinuousComparison:
    """Paired mean difference (candidate - baseline) with a t interval and Wilcoxon.

    Args:
        metric: Name of the metric (also names its random stream).
        baseline: Per-task values of the baseline (NaN where missing).
        candidate: Per-task values of the candidate (NaN where missing).
        config: Supplies the confidence level.
        left_out_reason: Why a pair can lack a value, shown next to the count left out.
    """
    keep = _usable(baseline, candidate)
    x, y = _kept(baseline, candidate, keep)
    n, left_out = int(keep.sum()), int((~keep).sum())
    common = ContinuousComparison(
        metric=metric,
        n_pairs=n,
        n_left_out=left_out,
        left_out_reason=left_out_reason if left_out else None,
    )
    if n == 0:
        return common
    level = config.confidence_level
    wilcoxon, pseudo_median = stats.signed_rank_and_estimate(x, y)
    ttest = stats.paired_t_test(x, y, confidence_level=level)
    ci: Interval | None = None
    note: str | None = None
    if n >= stats.MEAN_DIFFERENCE_MIN_N:
        diff = stats.mean_difference_interval(x, y, confidence_level=level)
        ci = Interval(
            low=float(diff.confidence_interval.low),
            high=float(diff.confidence_interval.high),
            confidence_level=level,
            method=diff.method,
        )
    else:
        note = (
            f"no interval for the mean difference below {stats.MEAN_DIFFERENCE_MIN_N} pairs "
            f"({n} here): skewed per-task differences make the t interval under-cover at small n "
            "(docs/VALIDATION.md); see the Wilcoxon test"
            + (" and the latency ratio interval" if metric == "latency_s" else "")
        )
    return common.model_copy(
        update=dict(
            baseline_mean=float(x.mean()),
            candidate_mean=float(y.mean()),
            mean_difference=float(np.mean(y - x)),
            ci=ci,
            ci_note=note,
            wilcoxon_pvalue=float(wilcoxon.pvalue),
            wilcoxon_method=wilcoxon.method,
            t_pvalue=float(ttest.pvalue),
            hodges_lehmann=float(pseudo_median),
        )
    )


def compare_latency(
    baseline: np.ndarray, candidate: np.ndarray, *, config: CampaignConfig
) -> LatencyComparison:
    """Latency in seconds: mean difference, geometric-mean ratio and share of faster tasks.

    Only pairs where both trials completed carry a latency; errored and timed-out trials never
    enter (their latency is NaN in the paired columns).
    """
    base = compare_continuous(
        "latency_s",
        baseline,
        candidate,
        config=config,
        left_out_reason="an error or no latency in an arm (a timeout counts at the time limit)",
    )
    keep = _usable(baseline, candidate) & (baseline > 0) & (candidate > 0)
    x, y = _kept(baseline, candidate, keep)
    extra = _ratio_fields(x, y, config) if x.size >= 2 else {}
    return LatencyComparison.model_validate({**base.model_dump(), **extra})


def _ratio_fields(x: np.ndarray, y: np.ndarray, config: CampaignConfig) -> dict[str, Any]:
    """The ratio fields of :class:`LatencyComparison` from 2+ positive pairs, or its
    ``ratio_note`` when a ratio or bound is past the float range (the report holds finite
    numbers: JSON has no infinity)."""
    ratio = stats.log_ratio_interval(x, y, confidence_level=config.confidence_level)
    ci = ratio.confidence_interval
    if not all(0 < v < math.inf for v in (ratio.estimate, ci.low, ci.high, ratio.median_ratio)):
        low, high = min(x.min(), y.min()), max(x.max(), y.max())
        return {"ratio_note": "no latency ratio: the ratio or a bound of its interval is past the "
                f"float range (per-task latencies from {low:g} s to {high:g} s)"}  # fmt: skip
    fields: dict[str, Any] = {
        "geometric_mean_ratio": float(ratio.estimate),
        "ratio_ci": Interval(
            low=float(ci.low),
            high=float(ci.high),
            confidence_level=config.confidence_level,
            method=ratio.method,
        ),
        "ratio_pvalue": float(ratio.pvalue),
        "median_ratio": float(ratio.median_ratio),
        "share_faster": float(np.mean(y < x)),
    }
    limit = config.gates.max_latency_ratio
    if limit is not None:
        # H0: log(y/x) <= log(limit): a paired t on the log ratios, shifted by the limit.
        shifted = stats.paired_t_test(np.log(x) + np.log(limit), np.log(y), alternative="greater")
        fields.update(
            ratio_limit=limit,
            ratio_limit_pvalue=float(shifted.pvalue),
            ratio_limit_method=f"one-sided paired t on log ratios, H0: ratio <= {limit:g}",
        )
    return fields
