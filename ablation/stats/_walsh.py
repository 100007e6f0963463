"""The median of the Walsh averages ``(d_i + d_j)/2``, ``i ≤ j`` (the Hodges–Lehmann estimate).

Three exact ways to the same number, picked by size:

- up to :data:`BRUTE_MAX` differences: every Walsh average, then ``np.median``;
- few distinct values (per-task means of verdicts are mostly 0, ±1 or a few fractions): the
  Walsh averages of a discrete distribution are the ``(v_a + v_b)/2`` of its distinct values
  ``v_a ≤ v_b`` with multiplicity ``c_a·c_b`` (``a < b``) or ``c_a(c_a + 1)/2`` (``a = b``), so the
  median is read off the ``O(k²)`` weighted pair averages of the ``k`` distinct values, whatever
  ``n`` is (:func:`walsh_median_counts`);
- otherwise an ``O(n log n)`` counting bisection on the value with ``O(n)`` memory
  (:func:`walsh_median_bisection`).

Each pair average is computed as ``(v_a + v_b) / 2.0`` in every method, so they select from the
same multiset of floats; tests check they agree on random data with many ties.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "BRUTE_MAX",
    "COUNTS_MAX",
    "walsh_median",
    "walsh_median_bisection",
    "walsh_median_counts",
]

#: Largest number of differences whose Walsh averages are all formed.
BRUTE_MAX = 2000
#: Largest number of distinct differences for the counting method (about 1.1 million pairs).
COUNTS_MAX = 1500


def _count_le(ds: NDArray[np.float64], t: float) -> int:
    """Number of Walsh averages ``(d_i + d_j)/2``, ``i ≤ j``, that are ``≤ t`` (``ds`` sorted)."""
    ordered = int(np.searchsorted(ds, 2.0 * t - ds, side="right").sum())
    diag = int(np.searchsorted(ds, t, side="right"))
    return (ordered + diag) // 2


def _kth_bisection(ds: NDArray[np.float64], k: int) -> float:
    """The k-th smallest (1-based) Walsh average, by bisection on the value then snapping."""
    lo, hi = float(ds[0]) - 1.0, float(ds[-1])
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _count_le(ds, mid) >= k:
            hi = mid
        else:
            lo = mid
    # the answer is the smallest Walsh average > lo
    j = np.searchsorted(ds, 2.0 * lo - ds, side="right")
    ok = j < ds.size
    cand = (ds[ok] + ds[j[ok]]) / 2.0
    cand = cand[cand > lo]
    return float(cand.min()) if cand.size else hi


def walsh_median_bisection(ds: NDArray[np.float64]) -> float:
    """Median of the Walsh averages of the sorted differences ``ds`` by counting bisection."""
    m = ds.size * (ds.size + 1) // 2
    if m % 2 == 1:
        return _kth_bisection(ds, (m + 1) // 2)
    return 0.5 * (_kth_bisection(ds, m // 2) + _kth_bisection(ds, m // 2 + 1))


def walsh_median_counts(values: NDArray[np.float64], counts: NDArray[np.int64]) -> float:
    """Median of the Walsh averages of a sample given as distinct ``values`` with ``counts``.

    Exact: the weighted pair averages of the distinct values are the Walsh averages of the
    sample with their multiplicities (module docstring). Cost ``O(k² log k)`` for ``k`` values.
    """
    i, j = np.triu_indices(values.size)
    averages = (values[i] + values[j]) / 2.0
    c = counts.astype(np.int64)
    weights = np.where(i == j, c[i] * (c[i] + 1) // 2, c[i] * c[j])
    order = np.argsort(averages, kind="stable")
    cumulative = np.cumsum(weights[order])
    m = int(cumulative[-1])
    sorted_avg = averages[order]

    def kth(k: int) -> float:
        return float(sorted_avg[int(np.searchsorted(cumulative, k, side="left"))])

    if m % 2 == 1:
        return kth((m + 1) // 2)
    return 0.5 * (kth(m // 2) + kth(m // 2 + 1))


def walsh_median(d: NDArray[np.float64]) -> float:
    """Median of the Walsh averages of ``d`` (non-empty, no NaN), by the cheapest exact method."""
    n = d.size
    if n <= BRUTE_MAX:
        i, j = np.triu_indices(n)
        return float(np.median((d[i] + d[j]) / 2.0))
    values, counts = np.unique(d, return_counts=True)
    if values.size <= COUNTS_MAX:
        return walsh_median_counts(values, counts)
    return walsh_median_bisection(np.sort(d))
