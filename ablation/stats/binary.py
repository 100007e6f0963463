"""Binary outcomes: McNemar tests, one-proportion intervals, zero-failure bound, pairing summary.

Notation (used throughout :mod:`ablation.stats`): rows are the baseline (pass, fail), columns the
candidate (pass, fail), ``[[n11, b], [c, n22]]``. ``b = n12`` counts regressions (baseline passed,
candidate failed), ``c = n21`` counts improvements, ``n = n11 + b + c + n22``, and the difference is
``Δ = (c − b) / n`` (candidate − baseline; positive means the candidate is better).
"""

from __future__ import annotations

import math
from typing import Any

from ablation.stats import _dist
from ablation.stats._common import (
    as_count,
    as_table,
    check_alternative,
    check_level,
    z_two_sided,
)
from ablation.stats._lazy import LazyModule
from ablation.stats._results import (
    ConfidenceInterval,
    McNemarResult,
    PairingSummary,
    ProportionResult,
)

_st: Any = LazyModule("scipy.stats")

__all__ = [
    "clopper_pearson_interval",
    "mcnemar",
    "paired_binary_summary",
    "wilson_interval",
    "zero_failure_upper_bound",
]

_MCNEMAR_METHODS = ("exact", "midp", "chi2", "chi2_cc")


_EXACT_N = 4096
"""Up to this many discordant pairs the fair-coin tails are exact: integer sums of binomial
coefficients divided by ``2**n`` (Python's int division rounds correctly), so a p-value such as
``2/128`` prints as exactly that. Above it the incomplete beta of :mod:`ablation.stats._dist`."""


def _fair_count(k: int, n: int) -> int:
    """``sum(C(n, i) for i <= k)``, summing the shorter side (``0 <= k < n``)."""
    if 2 * k < n:
        term = total = 1
        for i in range(1, k + 1):
            term = term * (n - i + 1) // i
            total += term
        return total
    return (1 << n) - _fair_count(n - k - 1, n)


def _binom_cdf(k: int, n: int) -> float:
    """``P(X ≤ k)`` for ``X ~ Bin(n, 1/2)``: exact up to :data:`_EXACT_N`, then the incomplete beta."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= _EXACT_N:
        return _fair_count(k, n) / (1 << n)
    return float(_dist.bdtr(k, n, 0.5))


def _binom_sf(k: int, n: int) -> float:
    """``P(X > k)`` for ``X ~ Bin(n, 1/2)`` (by symmetry ``P(X ≤ n − k − 1)``, never ``1 − cdf``)."""
    if k < 0:
        return 1.0
    if k >= n:
        return 0.0
    if n <= _EXACT_N:
        return _fair_count(n - k - 1, n) / (1 << n)
    return float(_dist.bdtrc(k, n, 0.5))


def _binom_pmf(k: int, n: int) -> float:
    if k < 0 or k > n:
        return 0.0
    if n <= _EXACT_N:
        return math.comb(n, k) / (1 << n)
    return float(_dist.binom_pmf(k, n, 0.5))


def mcnemar(
    b: int,
    c: int,
    *,
    method: str = "exact",
    alternative: str = "two-sided",
) -> McNemarResult:
    """McNemar's test for paired binary outcomes.

    Conditional on the ``N = b + c`` discordant pairs, ``b ~ Bin(N, 1/2)`` under H0: Δ = 0
    (McNemar 1947). ``alternative`` refers to ``Δ = (c − b)/n``: ``"less"`` is H1 "candidate
    worse" (exact p = ``P(X ≥ b)``), ``"greater"`` is H1 "candidate better" (exact p = ``P(X ≤ b)``).

    Methods:
        * ``"exact"``: two-sided ``min(1, 2·P(X ≤ min(b, c)))``. Tails come from
          ``scipy.stats.binom.cdf``/``sf`` (regularised incomplete beta), never ``1 − cdf``, so
          ``(0, 1000)`` gives ``2**-999`` and ``b + c = 10**6`` is exact and fast.
        * ``"midp"``: Lancaster's mid-p, ``2·P(X ≤ k) − P(X = k)`` with ``k = min(b, c)``, computed as
          ``P(X ≤ k) + P(X ≤ k − 1)`` (no cancellation); when ``b == c`` it is
          ``1 − ½·P(X = b)`` as in R ``contingencytables`` (Fagerland, Lydersen & Laake 2013).
          One-sided: ``P(X > b) + ½·P(X = b)`` (``"less"``), ``P(X < b) + ½·P(X = b)``
          (``"greater"``).
        * ``"chi2"``: the uncorrected score test ``z = (c − b)/√(b + c)``, i.e. Tango's score test at
          Δ0 = 0; two-sided uses ``z²`` on χ²(1).
        * ``"chi2_cc"``: Edwards' continuity correction ``(|b − c| − 1)²/(b + c)`` with ``|b − c| − 1``
          clipped at 0 (so ``b == c`` gives p = 1, unlike statsmodels/R); one-sided uses
          ``z = (c − b ∓ 1)/√(b + c)``.

    ``b + c == 0`` always gives statistic 0 and p = 1.0 (two-sided) — never NaN or inf.

    Args:
        b: Regressions (baseline pass, candidate fail).
        c: Improvements (baseline fail, candidate pass).
        method: ``"exact"`` (default), ``"midp"``, ``"chi2"`` or ``"chi2_cc"``.
        alternative: ``"two-sided"`` (default), ``"less"`` or ``"greater"``.

    Returns:
        A :class:`McNemarResult`.

    Raises:
        ValueError: On negative or non-integer counts or an unknown method/alternative.
    """
    b = as_count(b, "b")
    c = as_count(c, "c")
    check_alternative(alternative)
    if method not in _MCNEMAR_METHODS:
        raise ValueError(f"method must be one of {_MCNEMAR_METHODS}, got {method!r}")
    n = b + c
    if method == "exact":
        return _mcnemar_exact(b, c, n, alternative)
    if method == "midp":
        return _mcnemar_midp(b, c, n, alternative)
    return _mcnemar_asymptotic(b, c, n, alternative, corrected=method == "chi2_cc")


def _mcnemar_exact(b: int, c: int, n: int, alternative: str) -> McNemarResult:
    if alternative == "two-sided":
        k = min(b, c)
        p = 1.0 if n == 0 else min(1.0, 2.0 * _binom_cdf(k, n))
        name, stat = "exact McNemar (binomial, two-sided)", float(k)
    elif alternative == "less":
        p = 1.0 if n == 0 else _binom_sf(b - 1, n)  # P(X >= b)
        name, stat = "exact McNemar (binomial, one-sided: candidate worse)", float(b)
    else:
        p = 1.0 if n == 0 else _binom_cdf(b, n)  # P(X <= b)
        name, stat = "exact McNemar (binomial, one-sided: candidate better)", float(b)
    return McNemarResult(stat, min(1.0, max(0.0, p)), name, alternative, b, c)


def _mcnemar_midp(b: int, c: int, n: int, alternative: str) -> McNemarResult:
    if alternative == "two-sided":
        k = min(b, c)
        if n == 0:
            p = 1.0
        elif b == c:
            p = 1.0 - 0.5 * _binom_pmf(b, n)
        else:
            p = _binom_cdf(k, n) + _binom_cdf(k - 1, n)
        name, stat = "mid-p McNemar (two-sided)", float(k)
    elif alternative == "less":
        p = 1.0 if n == 0 else _binom_sf(b, n) + 0.5 * _binom_pmf(b, n)
        name, stat = "mid-p McNemar (one-sided: candidate worse)", float(b)
    else:
        p = 1.0 if n == 0 else _binom_cdf(b - 1, n) + 0.5 * _binom_pmf(b, n)
        name, stat = "mid-p McNemar (one-sided: candidate better)", float(b)
    return McNemarResult(stat, min(1.0, max(0.0, p)), name, alternative, b, c)


def _mcnemar_asymptotic(
    b: int, c: int, n: int, alternative: str, *, corrected: bool
) -> McNemarResult:
    label = (
        "continuity-corrected chi-squared McNemar" if corrected else "asymptotic McNemar (score z)"
    )
    d = c - b
    if alternative == "two-sided":
        if n == 0:
            return McNemarResult(0.0, 1.0, f"{label} (two-sided; b + c = 0)", alternative, b, c)
        num = max(abs(d) - 1, 0) if corrected else abs(d)
        chi2 = num * num / n
        p = float(_dist.chi2_sf_1(chi2))
        return McNemarResult(float(chi2), p, f"{label} (two-sided)", alternative, b, c)
    if n == 0:
        return McNemarResult(0.0, 1.0, f"{label} (one-sided; b + c = 0)", alternative, b, c)
    if alternative == "greater":
        z = (d - (1 if corrected else 0)) / math.sqrt(n)
        p = float(_dist.ndtr(-z))
        side = "candidate better"
    else:
        z = (d + (1 if corrected else 0)) / math.sqrt(n)
        p = float(_dist.ndtr(z))
        side = "candidate worse"
    return McNemarResult(float(z), p, f"{label} (one-sided: {side})", alternative, b, c)


def _proportion_args(k: int, n: int, confidence_level: float) -> tuple[int, int, float]:
    """``(k, n, level)`` checked: counts, ``k <= n``, a level in (0, 1)."""
    k, n = as_count(k, "k"), as_count(n, "n")
    if k > n:
        raise ValueError(f"k ({k}) cannot exceed n ({n})")
    return k, n, check_level(confidence_level)


def wilson_interval(k: int, n: int, *, confidence_level: float = 0.95) -> ProportionResult:
    """Wilson (1927) score interval for a binomial proportion.

    ``(p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)``; recommended over Wald by Agresti &
    Coull (1998) and Brown, Cai & DasGupta (2001). The lower bound is exactly 0 when ``k == 0`` and
    the upper bound exactly 1 when ``k == n``. ``n == 0`` gives estimate 0.0 and interval ``(0, 1)``.

    Args:
        k: Successes.
        n: Trials.
        confidence_level: Two-sided confidence level.

    Returns:
        A :class:`ProportionResult`.
    """
    k, n, level = _proportion_args(k, n, confidence_level)
    if n == 0:
        return ProportionResult(
            0.0, ConfidenceInterval(0.0, 1.0), "Wilson score interval (n = 0: no data)", 0, 0
        )
    z = z_two_sided(level)
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return ProportionResult(p, ConfidenceInterval(low, high), "Wilson score interval", k, n)


def clopper_pearson_interval(k: int, n: int, *, confidence_level: float = 0.95) -> ProportionResult:
    """Clopper–Pearson "exact" interval from beta quantiles.

    Guaranteed (conservative) coverage: ``[B(α/2; k, n−k+1), B(1−α/2; k+1, n−k)]``, with the bound
    exactly 0 when ``k == 0`` and exactly 1 when ``k == n``. ``n == 0`` gives ``(0, 1)``.

    Args:
        k: Successes.
        n: Trials.
        confidence_level: Two-sided confidence level.

    Returns:
        A :class:`ProportionResult`.
    """
    k, n, level = _proportion_args(k, n, confidence_level)
    if n == 0:
        return ProportionResult(
            0.0,
            ConfidenceInterval(0.0, 1.0),
            "Clopper-Pearson exact interval (n = 0: no data)",
            0,
            0,
        )
    a = (1.0 - level) / 2.0
    low = 0.0 if k == 0 else float(_st.beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(_st.beta.isf(a, k + 1, n - k))
    return ProportionResult(
        k / n, ConfidenceInterval(low, high), "Clopper-Pearson exact interval", k, n
    )


def zero_failure_upper_bound(n: int, *, confidence_level: float = 0.95) -> float:
    """One-sided upper confidence bound on a rate after 0 events in ``n`` independent trials.

    The Clopper–Pearson limit ``1 − (1 − level)^(1/n)`` ≈ ``3/n`` at 95% (the rule of three;
    Hanley & Lippman-Hand 1983; Jovanovic & Levy 1997). ``n == 0`` gives 1.0 (no information).
    The denominator matters: for regressions among tasks the baseline passes, use ``n = n11 + b``.

    Args:
        n: Number of independent trials (tasks, not runs, unless runs are independent).
        confidence_level: One-sided confidence level.

    Returns:
        The upper bound, in ``(0, 1]``.
    """
    n = as_count(n, "n")
    level = check_level(confidence_level)
    if n == 0:
        return 1.0
    # 1 - alpha**(1/n) = -expm1(log(alpha)/n), accurate for large n
    return float(-math.expm1(math.log1p(-level) / n))


def paired_binary_summary(n11: int, n12: int, n21: int, n22: int) -> PairingSummary:
    """Compare the paired and the (wrong) unpaired standard error of ``Δ̂``.

    ``se_paired = √((b + c) − (b − c)²/n) / n`` (computed from the exact integer
    ``n(b + c) − (b − c)²``); ``se_unpaired = √(p1(1−p1)/n + p2(1−p2)/n)`` with ``p1`` the baseline and
    ``p2`` the candidate pass rate; ``correlation`` is the phi coefficient of the table (0.0 when a
    margin is zero). Positive correlation is what makes pairing pay (Miller 2024).

    Args:
        n11: Both pass.
        n12: Regressions ``b``.
        n21: Improvements ``c``.
        n22: Both fail.

    Returns:
        A :class:`PairingSummary` (all zeros when ``n == 0``).
    """
    n11, b, c, n22 = as_table(n11, n12, n21, n22)
    n = n11 + b + c + n22
    if n == 0:
        return PairingSummary(0.0, 0.0, 0.0)
    num = n * (b + c) - (b - c) ** 2  # exact integer, >= 0
    se_paired = math.sqrt(max(num, 0)) / (n * math.sqrt(n))
    p1 = (n11 + b) / n
    p2 = (n11 + c) / n
    se_unpaired = math.sqrt(max(p1 * (1.0 - p1) + p2 * (1.0 - p2), 0.0) / n)
    margins = (n11 + b) * (c + n22) * (n11 + c) * (b + n22)
    corr = 0.0 if margins == 0 else (n11 * n22 - b * c) / math.sqrt(margins)
    return PairingSummary(se_paired, se_unpaired, float(max(-1.0, min(1.0, corr))))
