"""Equivalence (TOST) and non-inferiority for numeric paired metrics.

Both work on the per-task differences ``d = y − x`` (candidate − baseline), the convention of the
whole package, with paired t tests (df = n − 1). The binary counterpart of
:func:`metric_noninferiority` is :func:`ablation.stats.noninferiority_test`.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ablation.stats._common import check_level, paired_arrays
from ablation.stats._results import NonInferiorityResult, OneSidedTTest, TostResult
from ablation.stats._ties import TIE_ULPS, common_difference
from ablation.stats.continuous import _scaled_differences, _t_from_differences

__all__ = ["metric_noninferiority", "tost_paired"]


def tost_paired(x: ArrayLike, y: ArrayLike, low: float, upp: float) -> TostResult:
    """Two one-sided paired t tests (TOST) of equivalence: H1 ``low < mean(x − y) < upp``.

    Schuirmann (1987): test H0 ``mean d ≤ low`` against ``> low`` and H0 ``mean d ≥ upp`` against
    ``< upp`` with one-sided paired t tests; the TOST p-value is the larger of the two, and
    equivalence at level α holds when it is ``≤ α`` (equivalently the ``1 − 2α`` t interval lies in
    ``(low, upp)``).

    Argument order: exactly that of ``statsmodels.stats.weightstats.ttost_paired(x1, x2, low, upp)``,
    which tests the mean of ``x1 − x2``; ``tost_paired(x, y, low, upp)`` equals
    ``ttost_paired(x, y, low, upp)`` (p-values, statistics and df; tested to 1e-12). This is the one
    place where the difference is ``x − y``: to test the candidate's change over the baseline
    (``candidate − baseline``, the package's convention), call ``tost_paired(candidate, baseline,
    low, upp)``. With symmetric bounds ``(−M, M)`` the order does not change the p-value.

    Degenerate input as :func:`ablation.stats.paired_t_test` (no NaN): constant differences give
    statistics ±inf (p 0 or 1) or 0 (p 1) per side, compared exactly with the common value (a
    difference equal to a bound is on H0's side: p = 1) and reported as the estimate; one pair
    gives p = 1 on both sides.

    Args:
        x: First sample (e.g. the candidate's values), one per task.
        y: Second sample (e.g. the baseline's), paired by task.
        low: Lower equivalence bound for ``mean(x − y)``.
        upp: Upper equivalence bound, ``> low``.

    Returns:
        A :class:`TostResult`.

    Raises:
        ValueError: On empty, mismatched or non-finite input, or ``low ≥ upp``.
    """
    xa, ya = paired_arrays(x, y)
    lo, up = float(low), float(upp)
    if not (math.isfinite(lo) and math.isfinite(up) and lo < up):
        raise ValueError(f"need finite bounds with low < upp, got {low!r} and {upp!r}")
    d, s = _scaled_differences(ya, xa)  # x − y = d·s
    first = _t_from_differences(d, 0.95, "greater", "lower", shift=lo, scale=s)
    second = _t_from_differences(d, 0.95, "less", "upper", shift=up, scale=s)
    lower = OneSidedTTest(first.statistic, first.pvalue, first.df, lo, "greater")
    upper = OneSidedTTest(second.statistic, second.pvalue, second.df, up, "less")
    return TostResult(
        max(lower.pvalue, upper.pvalue),
        lower,
        upper,
        _t_from_differences(d, 0.95, "two-sided", "estimate", scale=s).estimate,
        f"TOST: two one-sided paired t tests of {lo:g} < mean(x - y) < {up:g}",
    )


def metric_noninferiority(
    x: ArrayLike,
    y: ArrayLike,
    *,
    margin: float,
    alpha: float = 0.05,
    higher_is_better: bool = True,
) -> NonInferiorityResult:
    """Non-inferiority of the candidate on a numeric metric, by a one-sided paired t test.

    With ``d = y − x`` (candidate − baseline):

    * ``higher_is_better=True`` (quality, pass fraction): H0 ``mean d ≤ −margin`` against
      ``mean d > −margin``; p from ``ttest_rel(y + margin, x, alternative="greater")``.
    * ``higher_is_better=False`` (latency, cost): H0 ``mean d ≥ +margin`` against
      ``mean d < +margin``; p from ``ttest_rel(y − margin, x, alternative="less")``.

    Decision, as :func:`ablation.stats.noninferiority_test`: ``"non-inferior"`` if ``p ≤ alpha``
    (equivalently, the ``1 − 2α`` t interval lies beyond ``−margin``, resp. below ``+margin``);
    otherwise ``"regression"`` if that interval shows the candidate significantly worse (upper
    limit < 0, resp. lower limit > 0); otherwise ``"inconclusive"``. The interval reported is the
    two-sided ``1 − 2α`` paired t interval for ``mean(y − x)``. The t test needs the CLT; for raw
    latencies see :data:`ablation.stats.MEAN_DIFFERENCE_MIN_N`.

    Every difference equal to the margin's edge (``−margin``, resp. ``+margin``) up to the
    round-off of the values and of the margin is that edge, exactly: a candidate worse by the
    margin on every task (a cost of 0.011 against 0.01 at a margin of 0.001, whose float
    difference is 0.0009999999999999992) is at the margin, on H0's side (p = 1), as one worse by
    0.1 against a margin of 0.1 (0.10000000000000003) is, and never non-inferior by round-off.

    Args:
        x: Baseline values, one per task.
        y: Candidate values, paired by task.
        margin: Largest tolerated worsening, ``≥ 0``, in the metric's units (set before the run).
        alpha: One-sided significance level in ``(0, 0.5)``.
        higher_is_better: Direction of "better" for this metric.

    Returns:
        A :class:`NonInferiorityResult` (``statistic`` is the one-sided t statistic).
    """
    xa, ya = paired_arrays(x, y)
    m = float(margin)
    if not (math.isfinite(m) and m >= 0.0):
        raise ValueError(f"margin must be finite and >= 0, got {margin!r}")
    a = float(alpha)
    if not 0.0 < a < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}")
    edge = -m if higher_is_better else m
    d, s = (np.full(xa.size, edge), 1.0) if _at_margin(xa, ya, edge) else _scaled_differences(xa, ya)
    level = check_level(1.0 - 2.0 * a)
    ci = _t_from_differences(d, level, "two-sided", "interval", scale=s).confidence_interval
    direction = "higher is better" if higher_is_better else "lower is better"
    if higher_is_better:
        test = _t_from_differences(d, level, "greater", "shifted", shift=-m, scale=s)
        worse = ci.high < 0.0
    else:
        test = _t_from_differences(d, level, "less", "shifted", shift=m, scale=s)
        worse = ci.low > 0.0
    decision: Literal["non-inferior", "regression", "inconclusive"]
    if test.pvalue <= a:
        decision = "non-inferior"
    elif worse:
        decision = "regression"
    else:
        decision = "inconclusive"
    name = (
        f"one-sided paired t non-inferiority test ({direction}; margin {m:g}, "
        f"one-sided alpha {a:g})"
    )
    return NonInferiorityResult(float(test.statistic), test.pvalue, m, a, decision, ci, name)


def _at_margin(x: np.ndarray, y: np.ndarray, edge: float) -> bool:
    """Whether every difference ``y − x`` is ``edge`` up to round-off: they share one value
    (:func:`~ablation.stats._ties.common_difference`, ties relative to each pair's operands)
    within ``TIE_ULPS`` ulps of the largest operand, plus the margin's own half ulp, of ``edge``."""
    same = common_difference(x, y)
    if same is None:
        return False
    top = float(max(np.max(np.abs(x)), np.max(np.abs(y))))
    eps = float(np.finfo(np.float64).eps)
    return abs(same - edge) <= TIE_ULPS * eps * top + eps * abs(edge)
