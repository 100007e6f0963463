"""Wilcoxon signed-rank statistic and p-values in numpy, without importing ``scipy.stats``.

``scipy.stats`` takes 1-1.5 s to import, which every report with a latency, cost or quality
comparison paid for one Wilcoxon test. This module computes what ``scipy.stats.wilcoxon``
(scipy 1.17, ``_wilcoxon.py``) computes for the two methods a report uses at any size:

- the normal approximation without continuity correction: average ranks of ``|d|``, ``z = (W+ − μ)
  / σ`` with ``μ = n(n+1)/4`` and ``σ² = (n(n+1)(2n+1) − Σ(t³ − t)/2) / 24`` over the tie groups
  ``t``; with ``zero_method="pratt"`` the zeros are ranked, their ``n₀(n₀+1)/4`` and
  ``n₀(n₀+1)(2n₀+1)`` are subtracted (Cureton 1967) and their tie group is left out of the
  correction;
- the exact null distribution of ``W+`` for untied, zero-free differences: the number of subsets
  of ``{1, …, n}`` with each sum, counted exactly in integers (scipy sums float pmfs; the two
  agree to rounding). The two-sided p-value is ``2·min(P(W+ ≥ ⌊w⌋), P(W+ ≤ ⌈w⌉))`` clipped to 1.

The exhaustive permutation test that scipy runs for tied or zero differences at ``n ≤ 13`` is not
here; callers use ``scipy.stats`` for it.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from ablation.stats._dist import ndtr

__all__ = ["signed_rank_asymptotic", "signed_rank_exact", "signed_rank_sums"]


def _average_ranks(a: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Average ranks of ``a`` (1-based, ties share their mean rank) and the tie-group sizes in
    increasing order of value (``scipy.stats.rankdata(a, 'average')``)."""
    order = np.argsort(a, kind="stable")
    y = a[order]
    first = np.concatenate(([True], y[1:] != y[:-1]))
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, y.size))
    mean_rank = starts + 1 + (counts - 1) / 2.0
    ranks = np.empty(a.size, dtype=np.float64)
    ranks[order] = np.repeat(mean_rank, counts)
    return ranks, counts


def signed_rank_sums(d: NDArray[np.float64]) -> tuple[float, float, NDArray[np.int64]]:
    """``(W+, W−, tie-group sizes)`` of the differences ``d`` ranked by ``|d|`` (zeros included)."""
    ranks, counts = _average_ranks(np.abs(d))
    return float(ranks[d > 0].sum()), float(ranks[d < 0].sum()), counts


def signed_rank_asymptotic(
    d: NDArray[np.float64], zero_method: str, alternative: str
) -> tuple[float, float]:
    """``(statistic, p)`` by the normal approximation, no continuity correction (module docstring).

    Args:
        d: The differences used: non-zero ones for ``"wilcox"``; all of them for ``"pratt"``.
        zero_method: ``"wilcox"`` or ``"pratt"``.
        alternative: ``"two-sided"``, ``"less"`` or ``"greater"``.

    Returns:
        ``min(W+, W−)`` two-sided or ``W+`` one-sided, and the p-value.
    """
    r_plus, r_minus, ties = signed_rank_sums(d)
    n = float(d.size)
    mean = n * (n + 1.0) * 0.25
    var = n * (n + 1.0) * (2.0 * n + 1.0)
    zeros = int(np.count_nonzero(d == 0))
    if zero_method == "pratt" and zeros:
        mean -= zeros * (zeros + 1.0) * 0.25
        var -= zeros * (zeros + 1.0) * (2.0 * zeros + 1.0)
        ties = ties[1:]  # the zeros are the smallest |d|: their group is the first
    t = ties.astype(np.float64)
    se = math.sqrt((var - float(np.sum(t**3 - t)) / 2.0) / 24.0)
    z = (r_plus - mean) / se
    if alternative == "two-sided":
        p = 2.0 * float(ndtr(-abs(z)))
    else:
        p = float(ndtr(-z if alternative == "greater" else z))
    return (min(r_plus, r_minus) if alternative == "two-sided" else r_plus), p


@lru_cache(maxsize=64)
def _subset_sum_counts(n: int) -> tuple[int, ...]:
    """How many subsets of ``{1, …, n}`` have each sum ``0 … n(n+1)/2`` (exact integers)."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    top = 0
    for k in range(1, n + 1):
        top += k
        for s in range(top, k - 1, -1):
            counts[s] += counts[s - k]
    return tuple(counts)


def signed_rank_exact(d: NDArray[np.float64], alternative: str) -> tuple[float, float]:
    """``(statistic, p)`` from the exact null distribution of ``W+`` (untied, zero-free ``d``)."""
    r_plus, r_minus, _ = signed_rank_sums(d)
    n = d.size
    counts = _subset_sum_counts(n)
    total = 1 << n
    lower = sum(counts[: math.ceil(r_plus) + 1])  # P(W+ <= ceil(w)) * 2^n
    upper = sum(counts[math.floor(r_plus) :])  # P(W+ >= floor(w)) * 2^n
    if alternative == "less":
        p = lower / total
    elif alternative == "greater":
        p = upper / total
    else:
        p = min(1.0, 2 * min(lower, upper) / total)
    return (min(r_plus, r_minus) if alternative == "two-sided" else r_plus), p
