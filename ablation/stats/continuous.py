"""Continuous paired metrics: paired t, Wilcoxon signed-rank, sign test, Hodges–Lehmann, log ratio.

Every function takes ``x`` (baseline) and ``y`` (candidate) paired by task and works on
``d = y − x`` (candidate − baseline), so positive means "candidate larger". Before ranking, sign
counting or Walsh averaging, differences within a few ulps of their operands of 0 are zero and of
each other are tied (:func:`ablation.stats._ties.tied_differences`: relative, so scale invariant),
so that ``y − x`` round-off cannot split ties (scipy's own warning for ``wilcoxon``).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats._common import check_alternative, check_level, exp_or_inf, paired_arrays
from ablation.stats._results import (
    ConfidenceInterval,
    DifferenceResult,
    RatioResult,
    TestResult,
    TTestResult,
)
from ablation.stats._signed_rank import signed_rank_test
from ablation.stats._t import t_cdf as _t_cdf
from ablation.stats._t import t_isf as _t_isf
from ablation.stats._t import t_sf as _t_sf
from ablation.stats._ties import in_float_range, tied_differences
from ablation.stats._walsh import walsh_median
from ablation.stats.binary import mcnemar
from ablation.stats.quantiles import median

__all__ = [
    "MEAN_DIFFERENCE_MIN_N",
    "hodges_lehmann",
    "log_ratio_interval",
    "mean_difference_interval",
    "paired_t_test",
    "sign_test",
    "signed_rank_and_estimate",
    "wilcoxon_signed_rank",
]

MEAN_DIFFERENCE_MIN_N = 100
"""Fewest tasks from which a report should show the t interval for a raw mean difference.

The paired t interval on raw seconds (or dollars) relies on the CLT, and per-task latency
differences are skewed: a task's latency scales the size of its difference. In the seeded
simulation of ``benchmarks/validation.py`` (log latency = task effect ~ N(0, 1) + arm shift +
noise with SD 0.5; candidate 1.5x slower or 1.5x faster) the nominal 95% interval covered only
about 89% at 20 tasks and 91.5% at 50, and 92.5% or more from 100 (figures in
``docs/VALIDATION.md``; with a 2x change it needs about 200). Below this n, report the
geometric-mean ratio (:func:`log_ratio_interval`), which covers 95% at any n in that model.
"""


_T_RANGE = (2.0**-400, 2.0**400)
"""Magnitudes of differences the t test takes as they are: outside, squares (and sums of them)
could overflow or underflow, so the differences are first scaled by a power of two (exact)."""


def _scaled_differences(
    xa: NDArray[np.float64], ya: NDArray[np.float64]
) -> tuple[NDArray[np.float64], float]:
    """``(y − x) / s`` and ``s``, a power of two: 1 unless a difference passes the float range
    (``1e308 − (−1e308)``), then the power of two above every operand, the differences formed
    from the scaled operands (finite, exact up to the round-off of one subtraction); then scaled
    into :data:`_T_RANGE` (:func:`_in_t_range`), so that their mean, sums and squares are finite
    whatever the magnitude of the data. Every statistic of paired differences takes them so."""
    with np.errstate(over="ignore"):
        d = ya - xa
    top = float(np.max(np.abs(d))) if d.size else 0.0
    if math.isinf(top):
        s = math.ldexp(1.0, math.frexp(float(max(np.max(np.abs(xa)), np.max(np.abs(ya)))))[1] - 1)
        return _in_t_range(ya / s - xa / s, s)  # each operand below 2 in magnitude
    return _in_t_range(d)


def _in_t_range(d: NDArray[np.float64], scale: float = 1.0) -> tuple[NDArray[np.float64], float]:
    """``d`` (in units of ``scale``) scaled by a power of two (exact) so that its largest magnitude
    lies in :data:`_T_RANGE`, and the new scale; ``d`` as it is when it already does (or is all
    zeros). Sums and squares of the scaled differences neither overflow nor underflow."""
    top = float(np.max(np.abs(d))) if d.size else 0.0
    if top > 0.0 and not _T_RANGE[0] <= top <= _T_RANGE[1]:
        k = math.frexp(top)[1] - 1  # |d| / 2**k in [1, 2)
        return np.ldexp(d, -k), math.ldexp(scale, k)
    return d, scale


def _t_from_differences(
    d: NDArray[np.float64],
    level: float,
    alternative: str,
    label: str,
    shift: float = 0.0,
    scale: float = 1.0,
) -> TTestResult:
    """The one-sample t test of ``mean(d)·scale − shift`` against 0 (``d`` in units of ``scale``).

    The standard deviation is that of ``d`` itself: that of ``d − shift`` would lose the digits
    the shift has in common with ``d`` (at ``d`` ~1e-5 and a shift of 1, five of sixteen).
    Differences of magnitude outside :data:`_T_RANGE` are scaled by a power of two first (exact),
    so that their squares neither overflow (differences of 1e300 gave a variance of ``inf`` and
    t = 0) nor underflow (differences of 1e-170 gave a variance of 0 and t = ±inf); the
    estimate, standard error and interval are given back in the units of the data (``±inf``
    past the float range, as an interval wider than any float).
    """
    n = d.size
    if n == 0:
        raise ValueError("no pairs")
    d, scale = _in_t_range(d, scale)
    shift /= scale  # a power of two: exact unless past the float range
    constant = not np.any(d != d[0])  # then d[0] exactly: a mean can round off the common value
    est = (float(d[0]) if constant else float(np.mean(d))) - shift

    def back(*values: float) -> list[float]:  # the units of the data
        with np.errstate(over="ignore"):
            return [float(v) for v in np.array(values) * scale]

    if n < 2:
        (e,) = back(est)
        why = "n = 1: no variance estimate; p = 1 and a zero-width interval at the estimate"
        return TTestResult(0.0, 1.0, 0, e, 0.0, ConfidenceInterval(e, e), f"{label} ({why})")
    df = n - 1
    se = float(np.std(d, ddof=1)) / math.sqrt(n)
    if se == 0.0 or constant:
        # constant differences: no sampling variability in the data
        if est == 0.0:
            stat, p = 0.0, 1.0
        else:
            stat = math.copysign(math.inf, est)
            if alternative == "two-sided":
                p = 0.0
            elif alternative == "greater":
                p = 0.0 if est > 0 else 1.0
            else:
                p = 0.0 if est < 0 else 1.0
        (e,) = back(est)
        why = f"zero variance: all differences equal {e:g}"
        return TTestResult(stat, p, df, e, 0.0, ConfidenceInterval(e, e), f"{label} ({why})")
    t = est / se
    if alternative == "two-sided":
        p = float(2.0 * _t_sf(abs(t), df))
        q = float(_t_isf((1.0 - level) / 2.0, df))
        low, high = est - q * se, est + q * se
    elif alternative == "greater":
        p = float(_t_sf(t, df))
        low, high = est - float(_t_isf(1.0 - level, df)) * se, math.inf
    else:
        p = float(_t_cdf(t, df))
        low, high = -math.inf, est + float(_t_isf(1.0 - level, df)) * se
    e, s, low, high = back(est, se, low, high)
    return TTestResult(float(t), min(1.0, p), df, e, s, ConfidenceInterval(low, high), label)


def paired_t_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    confidence_level: float = 0.95,
    alternative: str = "two-sided",
) -> TTestResult:
    """Paired t test on ``d = y − x`` (same as ``scipy.stats.ttest_rel(y, x)``).

    Valid for moderate n by the CLT even when d is not normal; with repeated runs, pass per-task
    means (the task is the unit, df = T − 1; Miller 2024). One-sided alternatives give one-sided
    intervals (one infinite limit, as scipy).

    Degenerate input (documented choice, no NaN): ``n == 1`` gives statistic 0, p = 1, df 0,
    standard error 0 and a zero-width interval at the estimate, with ``method`` saying so; constant
    differences give a zero-width interval at the estimate, which is then their common value
    exactly (not a mean that rounds off it), and either p = 1 (all zero) or statistic ±inf with
    p = 0 in the direction of the differences. Differences of any size, ``y − x`` past the float
    range included, are scaled by a power of two (exact) before they are squared, so that the
    variance neither overflows nor underflows; an interval limit past the float range is ``±inf``.

    Args:
        x: Baseline values.
        y: Candidate values.
        confidence_level: Confidence level of the interval.
        alternative: ``"two-sided"``, ``"less"`` (mean d < 0) or ``"greater"`` (mean d > 0).

    Returns:
        A :class:`TTestResult`.

    Raises:
        ValueError: ``"no pairs"`` for empty input.
    """
    xa, ya = paired_arrays(x, y)
    level = check_level(confidence_level)
    check_alternative(alternative)
    d, s = _scaled_differences(xa, ya)
    return _t_from_differences(d, level, alternative, f"paired t test ({alternative})", scale=s)


def mean_difference_interval(
    x: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95
) -> DifferenceResult:
    """Mean of ``d = y − x`` (candidate − baseline) with the paired t interval.

    Closed form, ``O(n)`` time and memory (no resampling): ``mean(d) ± t_{1−α/2, n−1}·sd(d)/√n``,
    the interval of ``scipy.stats.ttest_rel(y, x).confidence_interval()``. For a continuous metric
    (latency in seconds, cost, a quality score) this is the estimand when the total matters.
    Coverage needs the CLT: for skewed per-task differences such as raw latencies, show it only
    from :data:`MEAN_DIFFERENCE_MIN_N` tasks and prefer :func:`log_ratio_interval` below.
    Degenerate input as :func:`paired_t_test`: one pair or constant differences give a zero-width
    interval at the estimate, noted in ``method``.

    Args:
        x: Baseline values, one per task.
        y: Candidate values, paired with ``x`` by task.
        confidence_level: Two-sided confidence level.

    Returns:
        A :class:`DifferenceResult` (estimate, interval, method).

    Raises:
        ValueError: ``"no pairs"`` for empty input, or on mismatched / non-finite input.
    """
    xa, ya = paired_arrays(x, y)
    level = check_level(confidence_level)
    d, s = _scaled_differences(xa, ya)
    t = _t_from_differences(d, level, "two-sided", "mean difference, paired t interval", scale=s)
    return DifferenceResult(t.estimate, t.confidence_interval, t.method)


def wilcoxon_signed_rank(
    x: ArrayLike,
    y: ArrayLike,
    *,
    zero_method: str = "wilcox",
    method: str = "auto",
    alternative: str = "two-sided",
) -> TestResult:
    """Wilcoxon signed-rank test on ``d = y − x``, as ``scipy.stats.wilcoxon`` computes it.

    The exact, exhaustive-permutation and normal-approximation p-values are computed by
    :mod:`ablation.stats._signed_rank` (no ``scipy.stats`` import, the same numbers); a sampled
    permutation test (``method="permutation"`` above 13 differences) calls ``scipy.stats.wilcoxon``.

    The estimand is the pseudo-median of d (see :func:`hodges_lehmann`). ``method="auto"`` is resolved
    here, not in scipy, but by scipy 1.17's rule, and the choice is named in ``method``: with ``m``
    the number of all differences, zeros included (also under ``"wilcox"``), the exact null
    distribution when ``m ≤ 50`` with no ties and no zeros; exhaustive permutation (exact under
    ties) when ties or zeros occur and ``m ≤ 13``; otherwise the normal approximation without
    continuity correction. Ties and zeros are those of :func:`ablation.stats._ties.tied_differences`.
    ``zero_method`` is passed explicitly: ``"wilcox"`` drops zero differences, ``"pratt"`` ranks
    them then drops them (Pratt 1959).

    Returns ``statistic`` as scipy (``min(W+, W−)`` two-sided, ``W+`` one-sided) and ``n`` = number of
    differences used (non-zero ones for ``"wilcox"``). All-zero or empty input gives statistic 0,
    p = 1.0.

    Args:
        x: Baseline values.
        y: Candidate values.
        zero_method: ``"wilcox"`` (default) or ``"pratt"``.
        method: ``"auto"``, ``"exact"``, ``"asymptotic"`` or ``"permutation"``.
        alternative: ``"two-sided"``, ``"less"`` or ``"greater"`` (on d).

    Returns:
        A :class:`TestResult`.
    """
    if zero_method not in ("wilcox", "pratt"):
        raise ValueError(f"zero_method must be 'wilcox' or 'pratt', got {zero_method!r}")
    if method not in ("auto", "exact", "asymptotic", "permutation"):
        raise ValueError(
            f"method must be 'auto', 'exact', 'asymptotic' or 'permutation', got {method!r}"
        )
    check_alternative(alternative)
    xa, ya, _ = in_float_range(x, y)
    return signed_rank_test(tied_differences(xa, ya), zero_method, method, alternative)


def signed_rank_and_estimate(x: ArrayLike, y: ArrayLike) -> tuple[TestResult, float]:
    """:func:`wilcoxon_signed_rank` (its defaults) and :func:`hodges_lehmann` of the same pairs,
    their differences (:func:`~ablation.stats._ties.tied_differences`) computed once: what a
    report shows of each continuous metric.

    Raises:
        ValueError: ``"no pairs"`` for empty input (the estimate is undefined).
    """
    xa, ya, s = in_float_range(x, y)
    d = tied_differences(xa, ya)
    if d.size == 0:
        raise ValueError("no pairs")
    test = signed_rank_test(d, "wilcox", "auto", "two-sided")  # reads d only
    return test, walsh_median(d, overwrite=True) * s


def sign_test(x: ArrayLike, y: ArrayLike, *, alternative: str = "two-sided") -> TestResult:
    """Sign test: ``binomtest(#{d > 0}, #{d ≠ 0}, 1/2)``.

    The fewest assumptions; identical to exact McNemar on the signs. ``statistic`` = number of
    positive differences (candidate larger), ``n`` = number of non-zero differences (zero within a
    few ulps of the operands, :func:`ablation.stats._ties.tied_differences`). No non-zero
    difference gives p = 1.0.

    Args:
        x: Baseline values.
        y: Candidate values.
        alternative: ``"two-sided"``, ``"less"`` or ``"greater"`` (share of positive d vs 1/2).

    Returns:
        A :class:`TestResult`.
    """
    check_alternative(alternative)
    d = tied_differences(x, y)
    pos = int(np.count_nonzero(d > 0))
    nz = int(np.count_nonzero(d != 0))
    name = f"sign test (exact binomial, {alternative})"
    if nz == 0:
        return TestResult(0.0, 1.0, f"{name}; no non-zero differences", 0)
    # P(X >= pos) for "greater", P(X <= pos) for "less", X ~ Bin(nz, 1/2): McNemar's exact tails
    # with the positives as its b, without importing scipy.stats (scipy's binomtest, the same p)
    flipped = {"greater": "less", "less": "greater"}.get(alternative, alternative)
    p = mcnemar(pos, nz - pos, alternative=flipped).pvalue
    return TestResult(float(pos), min(1.0, p), name, nz)


def hodges_lehmann(x: ArrayLike, y: ArrayLike) -> float:
    """Hodges–Lehmann estimate of the pseudo-median of ``d = y − x``.

    The median of the Walsh averages ``(d_i + d_j)/2`` for ``i ≤ j``; the estimate that matches
    the Wilcoxon signed-rank test. Brute force up to 2000 pairs; above that, with few distinct
    differences (per-task means of verdicts), exactly from the distinct values and their counts
    in ``O(k²)``; otherwise an exact selection of the middle Walsh average (a few
    ``O(n log n)`` counting rounds, then a partition of a few million; ``O(n)`` memory; see
    :mod:`ablation.stats._walsh`). The differences are those of
    :func:`ablation.stats._ties.tied_differences` (scale-aware zeros and ties).

    Args:
        x: Baseline values.
        y: Candidate values.

    Returns:
        The estimate.

    Raises:
        ValueError: ``"no pairs"`` for empty input (the estimate is undefined).
    """
    xa, ya, s = in_float_range(x, y)
    d = tied_differences(xa, ya)
    if d.size == 0:
        raise ValueError("no pairs")
    return walsh_median(d, overwrite=True) * s


def log_ratio_interval(
    x: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95
) -> RatioResult:
    """Geometric-mean ratio ``y/x`` with a t interval on the log scale (e.g. latency, cost).

    Per-task ``r_i = log(y_i / x_i)``; estimate ``exp(mean r)``, interval = paired t interval on r
    exponentiated, p-value of the two-sided paired t test of mean r = 0, and the median ratio
    ``exp(median r)``. Suited to heavy-tailed multiplicative metrics where a raw-ms t test is
    dominated by the slowest tasks (STATISTICS.md §4). ``n == 1`` follows :func:`paired_t_test`
    (p = 1, zero-width interval, noted in ``method``).

    Args:
        x: Baseline values (> 0).
        y: Candidate values (> 0).
        confidence_level: Two-sided level.

    Returns:
        A :class:`RatioResult` (ratio < 1 means the candidate is smaller/faster). A figure past
        the float range is ``inf`` (or ``0.0`` below it): ``exp`` of a log ratio beyond ~709.

    Raises:
        ValueError: ``"no pairs"`` for empty input, or when any value is ≤ 0 (the message gives the
            count of offending pairs).
    """
    xa, ya = paired_arrays(x, y)
    level = check_level(confidence_level)
    if xa.size == 0:
        raise ValueError("no pairs")
    bad = int(np.count_nonzero((xa <= 0) | (ya <= 0)))
    if bad:
        raise ValueError(
            f"log_ratio_interval needs positive values; {bad} pair(s) have a value <= 0"
        )
    r = np.log(ya) - np.log(xa)
    t = _t_from_differences(r, level, "two-sided", "geometric-mean ratio, paired t on log ratios")
    ci = t.confidence_interval
    return RatioResult(
        exp_or_inf(t.estimate),
        ConfidenceInterval(exp_or_inf(ci.low), exp_or_inf(ci.high)),
        t.pvalue,
        exp_or_inf(median(r)),
        int(r.size),
        t.method,
    )
