"""Grid arithmetic of the betting confidence sequence (:mod:`ablation.stats.sequential_cs`).

Candidate uplifts on a grid, the log capital factors of the hedged betting processes (with or
without replacement), running sums, rejection of grid points and the certain range a finite suite
leaves. Kept apart so the sequence, the monitor and the vectorised replay share one copy.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ablation.stats._common import as_count

__all__ = [
    "DEFAULT_GRID_SIZE",
    "combine_bounds",
    "feasible_range",
    "grid_means",
    "grid_uplift",
    "log_factors",
    "margin_indices",
    "next_sums",
    "rejected_above",
    "rejected_below",
]

DEFAULT_GRID_SIZE = 2001  # candidate uplifts -1, -0.999, ..., 1
_TRUNCATION = 0.5  # c in λ = min(λ̇, c/μ): a bet never risks more than half the capital
_EPS = float(np.finfo(np.float64).eps)


def _check_grid_size(grid_size: int) -> int:
    g = as_count(grid_size, "grid_size")
    if g < 3:
        raise ValueError(f"grid_size must be at least 3, got {g}")
    return g


def _check_population(population_size: int | None) -> int | None:
    if population_size is None:
        return None
    n = as_count(population_size, "population_size")
    if n < 1:
        raise ValueError("population_size must be at least 1")
    return n


@functools.lru_cache(maxsize=8)
def grid_means(grid_size: int) -> NDArray[np.float64]:
    """Candidate means ``m_k = k/(G − 1)`` of x, i.e. uplifts ``Δ_k = 2·m_k − 1`` (read-only)."""
    means = np.arange(grid_size, dtype=np.float64) / (grid_size - 1)
    means.setflags(write=False)
    return means


def grid_uplift(k: Any, grid_size: int) -> Any:
    """The uplift ``Δ_k = 2k/(G − 1) − 1`` of grid point ``k`` (an int or an array of them), as the
    float nearest to it: one division of the exact integers ``2k − (G − 1)`` and ``G − 1``
    (``2k/(G − 1) − 1`` rounds twice and reads ``-0.02`` as ``-0.020000000000000018``)."""
    span = grid_size - 1
    return (2.0 * np.asarray(k, dtype=np.float64) - span) / span


@functools.lru_cache(maxsize=64)
def margin_indices(margin: float, grid_size: int) -> tuple[int, int]:
    """``(k_lo, k_hi)``: largest k with ``Δ_k ≤ −margin`` and smallest k with ``Δ_k ≥ −margin``.

    Exact rational arithmetic on the binary value of ``margin``, and a grid point whose uplift is
    −margin as a float (:func:`grid_uplift`: ``Δ_980 = −1/50`` beside a margin of 0.02, whose
    binary value is a little above 1/50) is at −margin: it never counts as above or below it, so a
    decision never contradicts the interval the report shows. Non-inferior ⇔ the lower index
    exceeds ``k_lo``; inferior ⇔ the upper index is below ``k_hi``.
    """
    pos = Fraction(grid_size - 1) * (1 - Fraction(margin)) / 2
    k_lo, k_hi = math.floor(pos), math.ceil(pos)
    at = [k for k in (k_lo, k_hi) if float(grid_uplift(k, grid_size)) == -margin]
    return (at[0], at[0]) if at else (k_lo, k_hi)


def log_factors(
    means: NDArray[np.float64],
    x: Any,
    t: Any,
    sums: tuple[Any, Any],
    alpha: float,
    population_size: int | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``log`` of the pair-t factors of ``K⁺`` and ``K⁻`` at every candidate mean.

    ``x``, ``t`` (1-based pair index) and the sums ``(Σx, Σ(x − μ̂)²)`` over the pairs before t
    broadcast over leading axes; ``means`` is ``(P,)`` and the result ``(..., P)``. The same
    elementwise operations serve one pair at a time and a whole trajectory, so both give
    bit-identical capitals.
    """
    tt = np.asarray(t, dtype=np.float64)
    var = (0.25 + np.asarray(sums[1], dtype=np.float64)) / tt
    lam = np.sqrt(2.0 * math.log(2.0 / alpha) / (var * tt * np.log1p(tt)))[..., None]
    if population_size is None:
        mu: Any = means
    else:
        before = np.asarray(sums[0], dtype=np.float64)[..., None]
        mu = (population_size * means - before) / (population_size - tt + 1.0)[..., None]
    floor = _TRUNCATION / lam
    dx = np.asarray(x, dtype=np.float64)[..., None] - mu
    up = np.log1p(_TRUNCATION / np.maximum(mu, floor) * dx)
    down = np.log1p(-_TRUNCATION / np.maximum(1.0 - mu, floor) * dx)
    return up, down


def next_sums(sums: tuple[Any, Any], x: Any, t: Any) -> tuple[Any, Any]:
    """``(Σx, Σ(x_i − μ̂_i)²)`` after pair t, with ``μ̂_t = (1/2 + Σ_{i≤t} x_i)/(t + 1)``."""
    sum_x = sums[0] + x
    return sum_x, sums[1] + (x - (0.5 + sum_x) / (t + 1.0)) ** 2


def rejected_below(log_up: NDArray[np.float64], threshold: float) -> Any:
    """Largest k with every grid point ``0..k`` rejected by ``K⁺`` (−1 if none)."""
    rej = log_up >= threshold
    return np.where(rej.all(axis=-1), rej.shape[-1] - 1, np.argmin(rej, axis=-1) - 1)


def rejected_above(log_down: NDArray[np.float64], threshold: float) -> Any:
    """Smallest k with every grid point ``k..G−1`` rejected by ``K⁻`` (G if none)."""
    rej = log_down >= threshold
    g = rej.shape[-1]
    return np.where(rej.all(axis=-1), 0, g - np.argmin(rej[..., ::-1], axis=-1))


def feasible_range(
    sum_d: Any, abs_sum: Any, integral: Any, t: Any, population_size: int | None
) -> tuple[Any, Any]:
    """Uplifts the suite can still have after t tasks; ``[-1, 1]`` for an infinite population.

    A sum of non-integer differences carries rounding error up to ``t·ε·Σ|d|``; the range is
    widened by twice that (over N), so it always holds the suite's true uplift. Callers keep the
    running intersection, which also absorbs the growth of that slack.
    """
    if population_size is None:
        return -1.0, 1.0
    n = population_size
    slack = np.where(integral, 0.0, 2.0 * t * _EPS * (np.asarray(abs_sum) + 1.0) / n)
    low = (np.asarray(sum_d) - (n - t)) / n - slack
    high = (np.asarray(sum_d) + (n - t)) / n + slack
    return np.maximum(low, -1.0), np.minimum(high, 1.0)


def combine_bounds(
    low_index: Any, high_index: Any, feasible: tuple[Any, Any], grid_size: int
) -> tuple[Any, Any, Any]:
    """Raw bounds ``(max(grid low, feasible low), min(grid high, feasible high))`` and emptiness."""
    span = grid_size - 1
    grid_low = np.where(low_index >= 0, grid_uplift(low_index, grid_size), -1.0)
    grid_high = np.where(high_index <= span, grid_uplift(high_index, grid_size), 1.0)
    low = np.maximum(grid_low, feasible[0])
    high = np.minimum(grid_high, feasible[1])
    return low, high, low > high
