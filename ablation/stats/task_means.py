"""Repeated runs: the test and the interval for the mean change in pass rate over tasks.

With ``runs > 1`` the task is the unit and its outcome is the difference of pass fractions
``d_i = candidate − baseline`` in ``[−1, 1]``. Most tasks of an agent are deterministic (``d_i = 0``),
a few change; a t test on the ``d_i`` then loses its level (its interval is ``[0, 0]`` when no task
changes). Two tools here keep it:

* :func:`sign_flip_test`: the exact sign-flip (permutation) test of H0 "within each task the two
  arms are exchangeable", under which each ``d_i`` is symmetric about 0. The statistic is
  ``S = Σ d_i``; its null distribution, ``Σ ε_i |d_i|`` over the ``2^n`` sign vectors, is
  computed exactly: the ``d_i`` lie on the lattice ``k/L`` (``L`` the least common multiple of the
  run counts), so ``S·L`` is a sum of scaled binomials ``m·(2·Bin(n_m, ½) − n_m)`` over the
  magnitudes ``m`` that occur, convolved in floating point. With one run per task it is the exact
  McNemar test (and is computed by it).
* :func:`bounded_mean_interval` and :func:`bounded_mean_noninferiority`: a fixed-n betting
  interval for the mean of bounded i.i.d. values (Waudby-Smith & Ramdas 2024, hedged capital with
  the predictable plug-in bet tuned to n), valid for any distribution on ``[−1, 1]`` and never of
  zero width. Non-inferiority reads the same capital: the e-value for H0 ``Δ ≤ −M`` at ``−M``.

Assumptions: tasks are independent (i.i.d. draws for the interval); the runs of each arm were
fixed in advance. The betting capital is taken over the tasks in a seeded random order.
"""

from __future__ import annotations

import math
from functools import reduce
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats._common import check_level
from ablation.stats._lazy import LazyModule
from ablation.stats._results import ConfidenceInterval, TestResult

_st: Any = LazyModule("scipy.stats")

__all__ = ["bounded_mean_interval", "bounded_mean_noninferiority", "sign_flip_test"]

_GRID = 2001  # candidate means -1, -0.999, ..., 1
_TRUNCATION = 0.75  # a bet never risks more than three quarters of the capital
_DIRECT = 10_000_000  # convolve directly below this product of lengths, by FFT above


def _lattice(d: NDArray[np.float64], denominator: int) -> NDArray[np.int64]:
    k = np.rint(d * denominator)
    if np.any(np.abs(d * denominator - k) > 1e-9 * denominator):
        raise ValueError(f"differences are not multiples of 1/{denominator}")
    return k.astype(np.int64)


def _convolve(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    if a.size * b.size <= _DIRECT:
        return np.convolve(a, b)
    size = a.size + b.size - 1
    out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)
    return np.clip(out, 0.0, None)


def _null_pmf(k: NDArray[np.int64]) -> NDArray[np.float64]:
    """pmf of ``T = Σ m·X_m`` (``X_m ~ Bin(n_m, ½)``): the positive part of a sign-flipped sum."""
    mags, counts = np.unique(np.abs(k[k != 0]), return_counts=True)
    parts = []
    for m, n_m in zip(mags.tolist(), counts.tolist(), strict=True):
        pmf = np.zeros(m * n_m + 1)
        pmf[::m] = _st.binom.pmf(np.arange(n_m + 1), n_m, 0.5)
        parts.append(pmf)
    return reduce(_convolve, parts, np.ones(1))


def sign_flip_test(
    differences: ArrayLike, *, denominator: int, alternative: str = "two-sided"
) -> TestResult:
    """Exact sign-flip test that per-task differences are symmetric about 0.

    Args:
        differences: Per-task ``candidate − baseline`` pass fractions, multiples of
            ``1/denominator``.
        denominator: ``L`` with every ``d_i·L`` an integer (the lcm of the run counts).
        alternative: ``"less"`` (H1: candidate worse, ``P(S ≤ s)``), ``"greater"`` (H1: candidate
            better, ``P(S ≥ s)``) or ``"two-sided"`` (twice the smaller tail, at most 1).

    Returns:
        A :class:`TestResult` whose ``statistic`` is ``S = Σ d_i``; ``pvalue`` 1 when every
        ``d_i`` is 0. With ``denominator == 1`` the exact McNemar test on ``b`` = count of
        ``d_i < 0`` and ``c`` = count of ``d_i > 0``.

    Raises:
        ValueError: on an unknown alternative, ``denominator < 1``, or off-lattice differences.
    """
    if alternative not in ("less", "greater", "two-sided"):
        raise ValueError(f"unknown alternative {alternative!r}")
    if int(denominator) < 1:
        raise ValueError("denominator must be at least 1")
    d = np.asarray(differences, dtype=np.float64).ravel()
    k = _lattice(d, int(denominator))
    method = f"exact sign-flip test on per-task mean differences ({alternative})"
    if int(denominator) == 1:
        from ablation.stats.binary import mcnemar

        res = mcnemar(int(np.sum(k < 0)), int(np.sum(k > 0)), alternative=alternative)
        return TestResult(float(d.sum()), float(res.pvalue), method, int(d.size))
    pmf = _null_pmf(k)
    t_obs = int(k[k > 0].sum())
    low, high = float(pmf[: t_obs + 1].sum()), float(pmf[t_obs:].sum())
    p = {"less": low, "greater": high, "two-sided": 2.0 * min(low, high)}[alternative]
    return TestResult(float(d.sum()), min(1.0, p), method, int(d.size))


def _bets(d: NDArray[np.float64], alpha: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``x = (d + 1)/2`` and the predictable plug-in bet ``λ_t`` of each task (before truncation)."""
    x = (d + 1.0) / 2.0
    n = x.size
    t = np.arange(1, n + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(x)) / (t + 1.0)
    sq = np.concatenate(([0.0], np.cumsum((x - mu) ** 2)[:-1]))
    var = (0.25 + sq) / t  # predictable: pairs before t
    return x, np.sqrt(2.0 * math.log(2.0 / alpha) / (n * var))


def _log_capital(x: NDArray[np.float64], lam: NDArray[np.float64], mean: float, up: bool) -> float:
    """Log hedged capital at the candidate mean ``mean`` of ``d``: ``K⁺`` (``up``) or ``K⁻``.

    ``log K⁺`` does not increase with ``mean`` and ``log K⁻`` does not decrease: each term
    ``log(1 ± min(λ_t, c/m)·(x_t − m))`` is monotone in ``m`` (for ``x_t < m`` the truncated bet
    times ``m − x_t`` is ``λ_t(m − x_t)`` or ``c(1 − x_t/m)``, both growing with ``m``).
    """
    m = (mean + 1.0) / 2.0
    if up:
        return float(np.log1p(np.minimum(lam, _TRUNCATION / max(m, 1e-300)) * (x - m)).sum())
    return float(np.log1p(-np.minimum(lam, _TRUNCATION / max(1.0 - m, 1e-300)) * (x - m)).sum())


def _first(size: int, holds: Any) -> int:
    """The first index in ``[0, size)`` where the monotone ``holds`` (False…False True…True) is
    true, ``size`` when it never is: bisection, ``log2(size)`` calls."""
    lo, hi = 0, size
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _ordered(differences: ArrayLike, rng: int | np.random.Generator) -> NDArray[np.float64]:
    d = np.asarray(differences, dtype=np.float64).ravel()
    if d.size == 0:
        raise ValueError("no tasks")
    if not np.all(np.isfinite(d) & (np.abs(d) <= 1.0)):
        raise ValueError("differences must be finite and in [-1, 1]")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return d[gen.permutation(d.size)]


def bounded_mean_interval(
    differences: ArrayLike,
    *,
    confidence_level: float = 0.95,
    rng: int | np.random.Generator = 0,
) -> ConfidenceInterval:
    """Fixed-n betting interval for the mean of values in ``[−1, 1]`` (never zero width).

    Each side is tested at ``(1 − confidence_level)/2``; a grid point is in the interval unless
    its capital reaches ``2/(1 − confidence_level)``. The limits are the last rejected points of a
    grid of step 0.001, conservative by less than one step. The capitals are monotone in the
    candidate mean, so each end is found by bisection: about 2 x 11 sums over the tasks, not 2001.

    Args:
        differences: Per-task differences in ``[−1, 1]``.
        confidence_level: Coverage for the mean of i.i.d. tasks.
        rng: Seed or generator of the order in which the capital is accumulated.

    Returns:
        The interval.

    Raises:
        ValueError: on empty input or values outside ``[−1, 1]``.
    """
    level = check_level(confidence_level, "confidence_level")
    d = _ordered(differences, rng)
    alpha = 1.0 - level
    grid = np.linspace(-1.0, 1.0, _GRID)
    x, lam = _bets(d, alpha)
    threshold = math.log(2.0 / alpha)
    # The grid points kept are those where neither capital reaches the threshold: by the
    # monotonicity of the capitals (:func:`_log_capital`) a run [first, last], found by bisection.
    first = _first(_GRID, lambda i: _log_capital(x, lam, float(grid[i]), up=True) < threshold)
    last = _first(_GRID, lambda i: _log_capital(x, lam, float(grid[i]), up=False) >= threshold) - 1
    if first > last:  # cannot happen for a true mean on the grid; fall back to the range
        return ConfidenceInterval(-1.0, 1.0)
    low = float(grid[first - 1]) if first > 0 else -1.0
    high = float(grid[last + 1]) if last < _GRID - 1 else 1.0
    return ConfidenceInterval(low, high)


def bounded_mean_noninferiority(
    differences: ArrayLike,
    *,
    margin: float,
    alpha: float = 0.05,
    rng: int | np.random.Generator = 0,
) -> TestResult:
    """Betting test of H0 ``mean ≤ −margin`` against H1 ``mean > −margin``.

    The capital ``K⁺`` at ``−margin`` (the bets of :func:`bounded_mean_interval` at level
    ``1 − 2·alpha``) is an e-value; ``p = min(1, 1/K⁺)`` is a valid p-value (Markov), and
    ``p ≤ alpha`` exactly when that interval's lower limit clears ``−margin`` on the grid.

    Returns:
        A :class:`TestResult` whose ``statistic`` is ``log K⁺(−margin)``.
    """
    a = check_level(alpha, "alpha")
    if not 0.0 < float(margin) < 1.0:
        raise ValueError(f"margin must be in (0, 1), got {margin!r}")
    d = _ordered(differences, rng)
    log_k = _log_capital(*_bets(d, 2.0 * a), -float(margin), up=True)
    p = 1.0 if log_k <= 0 else min(1.0, math.exp(-log_k))
    method = "betting e-value for H0: mean <= -margin (fixed-n, Waudby-Smith & Ramdas)"
    return TestResult(log_k, p, method, int(d.size))
