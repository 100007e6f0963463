"""Confidence intervals for the paired difference Δ and the non-inferiority test.

Table ``[[n11, b], [c, n22]]`` (rows baseline pass/fail, columns candidate pass/fail);
``Δ = (c − b) / n`` = candidate − baseline. Every interval here lies within ``[−1, 1]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

from ablation.stats import _dist
from ablation.stats._common import as_table, check_level, z_two_sided
from ablation.stats._lazy import LazyModule
from ablation.stats._ni_exact import exact_ni_pvalue
from ablation.stats._results import ConfidenceInterval, DifferenceResult, NonInferiorityResult
from ablation.stats._roots import brentq
from ablation.stats.binary import wilson_interval

_st: Any = LazyModule("scipy.stats")

__all__ = ["noninferiority_test", "paired_difference_interval", "tango_score_statistic"]

_HUGE = 1e300


def _restricted_p12(b: int, c: int, n: int, delta: float) -> float:
    """Restricted MLE of the regression-cell probability ``p12`` under H0: Δ = δ (Tango 1998).

    Tango's closed form with the roles of the discordant cells swapped for ``Δ = p21 − p12``:
    ``A = 2n``, ``B = −b − c + (2n − c + b)·δ``, ``C = −b·δ(1 − δ)``, root ``(−B + √(B² − 4AC))/2A``
    (evaluated in the cancellation-free form when ``B > 0``).
    """
    a = 2.0 * n
    bb = -b - c + (2.0 * n - c + b) * delta
    cc = -b * delta * (1.0 - delta)
    disc = math.sqrt(max(bb * bb - 4.0 * a * cc, 0.0))
    if bb <= 0.0:
        return (disc - bb) / (2.0 * a)
    return (2.0 * cc) / (-bb - disc)


def tango_score_statistic(b: int, c: int, n: int, delta: float) -> float:
    """Tango's (1998) score statistic for H0: Δ = δ, with Δ = (c − b)/n.

    ``Z(δ) = (c − b − nδ) / √(n·(2·p̃12 + δ(1 − δ)))``, decreasing in δ. At δ = 0 it equals the
    uncorrected McNemar z ``(c − b)/√(b + c)``. Degenerate cases are defined: 0/0 gives 0, and a
    non-zero numerator over a zero variance gives ``±1e300``.

    Args:
        b: Regressions.
        c: Improvements.
        n: Total pairs (> 0).
        delta: Hypothesised difference in ``[−1, 1]``.

    Returns:
        The statistic ``Z(δ)``.
    """
    num = c - b - n * delta
    var = 2.0 * _restricted_p12(b, c, n, delta) + delta * (1.0 - delta)
    sd = math.sqrt(max(n * var, 0.0))
    if sd <= 0.0 or sd < 1e-300:
        if abs(num) < 1e-12 * max(n, 1):
            return 0.0
        return math.copysign(_HUGE, num)
    z = num / sd
    return max(-_HUGE, min(_HUGE, z))


def _tango_interval(n11: int, b: int, c: int, n22: int, level: float) -> tuple[float, float]:
    n, z = n11 + b + c + n22, z_two_sided(level)
    est = (c - b) / n
    if b == 0 and c == 0:
        # closed form of the score interval with no discordant pairs: ±z²/(n + z²)
        h = z * z / (n + z * z)
        return -h, h

    def f(delta: float, target: float) -> float:
        return tango_score_statistic(b, c, n, delta) - target

    if c == 0 and b == n:
        low = -1.0
    else:
        low = brentq(f, -1.0, est, args=(z,), xtol=1e-14, rtol=1e-14, maxiter=500)
    if b == 0 and c == n:
        high = 1.0
    else:
        high = brentq(f, est, 1.0, args=(-z,), xtol=1e-14, rtol=1e-14, maxiter=500)
    return max(-1.0, min(low, est)), min(1.0, max(high, est))


def _newcombe_interval(n11: int, b: int, c: int, n22: int, level: float) -> tuple[float, float]:
    n = n11 + b + c + n22
    p1 = (n11 + b) / n  # baseline pass rate
    p2 = (n11 + c) / n  # candidate pass rate
    ci1 = wilson_interval(n11 + b, n, confidence_level=level).confidence_interval
    ci2 = wilson_interval(n11 + c, n, confidence_level=level).confidence_interval
    l1, u1, l2, u2 = ci1.low, ci1.high, ci2.low, ci2.high
    margins = (n11 + b) * (c + n22) * (n11 + c) * (b + n22)
    a = n11 * n22 - b * c
    if margins == 0:
        phi = 0.0
    elif a > n / 2:
        phi = (a - n / 2) / math.sqrt(margins)
    elif a >= 0:
        phi = 0.0
    else:
        phi = a / math.sqrt(margins)
    est = p2 - p1
    dl = (p2 - l2) ** 2 - 2.0 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2
    du = (u2 - p2) ** 2 - 2.0 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2
    return est - math.sqrt(max(dl, 0.0)), est + math.sqrt(max(du, 0.0))


def _wald_interval(n11: int, b: int, c: int, n22: int, level: float) -> tuple[float, float]:
    n, z = n11 + b + c + n22, z_two_sided(level)
    est = (c - b) / n
    se = math.sqrt(max(n * (b + c) - (b - c) ** 2, 0)) / (n * math.sqrt(n))
    return est - z * se, est + z * se


def _agresti_min_interval(n11: int, b: int, c: int, n22: int, level: float) -> tuple[float, float]:
    m, z = n11 + b + c + n22 + 2, z_two_sided(level)
    centre = (c - b) / m
    se = math.sqrt(max((b + c + 1) - (c - b) ** 2 / m, 0.0)) / m
    return centre - z * se, centre + z * se


def _bonett_price_interval(n11: int, b: int, c: int, n22: int, level: float) -> tuple[float, float]:
    m, z = n11 + b + c + n22 + 2, z_two_sided(level)
    p12, p21 = (b + 1) / m, (c + 1) / m
    se = math.sqrt(max((p12 + p21) - (p21 - p12) ** 2, 0.0) / m)
    return (p21 - p12) - z * se, (p21 - p12) + z * se


#: Each method of :func:`paired_difference_interval`: its name in the result, and its limits from
#: ``(n11, b, c, n22, confidence level)`` with ``n > 0``, before truncation to ``[−1, 1]``.
_METHODS: dict[str, tuple[str, Callable[[int, int, int, int, float], tuple[float, float]]]] = {
    "tango": ("Tango score interval", _tango_interval),
    "newcombe": ("Newcombe hybrid score (square-and-add) interval", _newcombe_interval),
    "wald": ("Wald interval (truncated to [-1, 1])", _wald_interval),
    "agresti_min": ("Agresti-Min adjusted Wald interval (+0.5 per cell)", _agresti_min_interval),
    "bonett_price": ("Bonett-Price adjusted Wald interval", _bonett_price_interval),
}


def paired_difference_interval(
    n11: int,
    n12: int,
    n21: int,
    n22: int,
    *,
    method: str = "tango",
    confidence_level: float = 0.95,
) -> DifferenceResult:
    """Confidence interval for the paired difference ``Δ = (c − b)/n`` (candidate − baseline).

    Methods (see Fagerland, Lydersen & Laake 2014, who recommend Tango, with Newcombe and
    Bonett–Price as closed-form alternatives):

    * ``"tango"`` (default): Tango (1998) score interval, inverting the restricted-MLE score
      test; limits by ``brentq`` on the monotone ``Z(δ)``. Non-degenerate with zero off-diagonal
      cells (``[[90, 0], [0, 10]]`` gives ±0.0370). Reproduces R ``contingencytables``.
    * ``"newcombe"``: Newcombe (1998b) hybrid score "square-and-add" (method 10) with the
      continuity-corrected φ*.
    * ``"wald"``: ``Δ̂ ± z·√((b + c) − (b − c)²/n)/n``; zero width when ``b + c = 0`` or one
      discordant cell is empty. Shown only to exhibit that degeneracy.
    * ``"agresti_min"``: Agresti & Min (2005): add 0.5 to every cell, then Wald.
    * ``"bonett_price"``: Bonett & Price (2012) adjusted Wald with ``(b + 1)/(n + 2)``,
      ``(c + 1)/(n + 2)`` and variance divided by ``n + 2``.

    All limits are truncated to ``[−1, 1]``. ``estimate`` is always the observed ``(c − b)/n``.
    The adjusted Wald methods centre their interval on a shrunken difference; in the rare case
    (extreme tables, low confidence levels) where it would miss the observed estimate, it is
    widened to contain it and ``method`` says so. ``n == 0`` gives estimate 0 and interval
    ``(−1, 1)``.

    Args:
        n11: Both pass.
        n12: Regressions ``b``.
        n21: Improvements ``c``.
        n22: Both fail.
        method: One of ``"tango"``, ``"newcombe"``, ``"wald"``, ``"agresti_min"``,
            ``"bonett_price"``.
        confidence_level: Two-sided confidence level.

    Returns:
        A :class:`DifferenceResult`.
    """
    n11, b, c, n22 = as_table(n11, n12, n21, n22)
    level = check_level(confidence_level)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {tuple(_METHODS)}, got {method!r}")
    name, limits = _METHODS[method]
    n = n11 + b + c + n22
    if n == 0:
        return DifferenceResult(0.0, ConfidenceInterval(-1.0, 1.0), f"{name} (n = 0: no data)")
    est = (c - b) / n
    low, high = limits(n11, b, c, n22, level)
    if not low <= est <= high:
        # the adjusted Wald intervals are centred on a shrunken difference; at low confidence
        # levels and extreme tables they can miss the observed estimate; widen to include it
        low, high = min(low, est), max(high, est)
        name = f"{name}, widened to contain the observed difference"
    return DifferenceResult(est, ConfidenceInterval(max(-1.0, low), min(1.0, high)), name)


def noninferiority_test(
    n11: int,
    n12: int,
    n21: int,
    n22: int,
    *,
    margin: float,
    alpha: float = 0.05,
) -> NonInferiorityResult:
    """Non-inferiority test of H0: Δ ≤ −margin against H1: Δ > −margin (paired binary).

    The statistic is the restricted-MLE score statistic ``Z(−margin)`` of Nam (1997) and Tango
    (1998). Its normal p-value ``1 − Φ(Z)`` alone exceeds the level on small samples (exact size
    5.5% at n = 50, ψ = 0.1, margin 0.02; still 5.03% at n = 700), so the p-value is exact and
    unconditional: the Berger & Boos (1994) p-value with ``Z`` as the ordering of the tables
    (Sidik 2003), i.e. the supremum over the discordant probability ψ in a 99.9% Clopper–Pearson
    interval of ``P(Z ≥ z_obs)`` at ``Δ = −margin``, plus ``γ = 0.001``. The reported p-value is
    ``max(exact, 1 − Φ(Z))``: the exact part bounds the size by α at every n and ψ, and the
    asymptotic part keeps the verdict consistent with the reported interval (non-inferior ⇒ the
    lower limit of the ``1 − 2α`` Tango interval is > −margin). Only ``O(√n)`` discordant totals
    enter, so the cost is bounded (milliseconds at n ≤ 10⁴, about 0.3 s at n = 10⁶); no
    asymptotic switch is needed. Sizes over n ∈ 30..1000: ``docs/VALIDATION.md``.

    Decision (``p ≤ α`` rejects H0):

    * ``"non-inferior"`` if ``p ≤ alpha`` (checked first: a significant regression that stays
      inside the margin is still non-inferior by definition);
    * ``"regression"`` if the upper limit of the ``1 − 2α`` Tango interval is < 0;
    * ``"inconclusive"`` otherwise. "McNemar not significant" is not "no regression"
      (Altman & Bland 1995).

    ``n == 0`` gives statistic 0, p = 1 and "inconclusive".

    Args:
        n11: Both pass.
        n12: Regressions ``b``.
        n21: Improvements ``c``.
        n22: Both fail.
        margin: Non-inferiority margin ``M`` in pass-rate units, ``0 ≤ M < 1`` (set before the run).
        alpha: One-sided significance level, ``0 < alpha < 0.5``.

    Returns:
        A :class:`NonInferiorityResult`.
    """
    n11, b, c, n22 = as_table(n11, n12, n21, n22)
    m = float(margin)
    if not (math.isfinite(m) and 0.0 <= m < 1.0):
        raise ValueError(f"margin must be in [0, 1) (pass-rate units), got {margin!r}")
    a = float(alpha)
    if not 0.0 < a < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}")
    name = (
        "exact unconditional non-inferiority test (Berger-Boos p-value, Tango/Nam score "
        f"ordering; margin {m:g}, one-sided alpha {a:g})"
    )
    n = n11 + b + c + n22
    ci = paired_difference_interval(
        n11, b, c, n22, method="tango", confidence_level=1.0 - 2.0 * a
    ).confidence_interval
    if n == 0:
        return NonInferiorityResult(0.0, 1.0, m, a, "inconclusive", ci, f"{name}; n = 0")
    zstat = tango_score_statistic(b, c, n, -m)
    p = max(float(_dist.ndtr(-zstat)), exact_ni_pvalue(b, c, n, m))
    decision: Literal["non-inferior", "regression", "inconclusive"]
    if p <= a:
        decision = "non-inferior"
    elif ci.high < 0.0:
        decision = "regression"
    else:
        decision = "inconclusive"
    return NonInferiorityResult(float(zstat), min(1.0, p), m, a, decision, ci, name)
