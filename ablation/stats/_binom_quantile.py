"""Binomial quantiles (``scipy.stats.binom.ppf`` / ``isf``) by a discrete search on the tails.

The tails are :func:`ablation.stats._dist.bdtr` / ``bdtrc``; ``tests/stats/test_stats_dist.py``
compares the quantiles with scipy's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ablation.stats._dist import _out, bdtr, bdtrc, ndtri

__all__ = ["binom_isf", "binom_ppf"]

_SEARCH_RTOL = 8.0 * 2.0**-52  # a tail within a few ulps of q counts as reaching it


def _reached(value: Any, q: NDArray[np.float64] | np.float64, *, upper: bool) -> NDArray[np.bool_]:
    v = np.asarray(value)
    return (v <= q * (1.0 + _SEARCH_RTOL)) if upper else (v >= q * (1.0 - _SEARCH_RTOL))


def _normal_bracket(
    tail: Any,
    q: NDArray[np.float64] | np.float64,
    n: NDArray[np.float64] | np.float64,
    p: NDArray[np.float64] | np.float64,
    *,
    upper: bool,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A bracket ``(lo, hi]`` of the answer from the normal approximation, checked by two tail calls.

    ``n·p ± z·√(n·p·q)`` with a margin of ``⌈5 + z²⌉`` (more than the skewness correction
    ``(z² − 1)·|1 − 2p|/6`` of Cornish–Fisher); where a check fails, the whole range ``(−1, n]``.
    Both ends are integers (or ``n``): the bisection halves an integer gap, and a fractional end
    (``hi − lo`` in ``(1, 2)`` with ``⌊(lo + hi)/2⌋ = lo``) would never close it.
    """
    z = np.asarray(ndtri(np.clip(1.0 - q if upper else q, 1e-300, 1.0 - 1e-16)), dtype=np.float64)
    guess = np.floor(n * p + z * np.sqrt(n * p * (1.0 - p)))
    margin = np.ceil(5.0 + z * z)
    lo = np.clip(guess - margin, -1.0, n)
    hi = np.clip(guess + margin, -1.0, n)
    lo_ok = (lo < 0) | ~_reached(tail(np.maximum(lo, 0.0), n, p), q, upper=upper)
    hi_ok = (hi >= n) | _reached(tail(hi, n, p), q, upper=upper)
    return np.where(lo_ok, lo, -1.0), np.where(hi_ok, hi, n)


def _discrete_search(tail: Any, q: ArrayLike, n: ArrayLike, p: ArrayLike, *, upper: bool) -> Any:
    """Smallest ``k`` in ``[0, n]`` with ``cdf(k) ≥ q`` (``upper=False``) or ``sf(k) ≤ q`` (``upper=True``).

    Bisection on the integers, elementwise: ``⌈log₂(n + 1)⌉`` evaluations of the tail. A tail
    within ``8·eps`` (relative) of ``q`` counts as reaching it, as Boost's root-then-round search
    behind scipy does for a ``q`` that is exactly a cdf value (``binom.ppf(0.5, 5, 0.5) = 2``).
    One ``(q, n, p)`` is searched in plain floats (:func:`_scalar_search`), as the scalar tails
    cost a tenth of a one-entry array call.
    """
    if all(np.ndim(v) == 0 for v in (q, n, p)):
        return np.float64(_scalar_search(tail, float(q), float(n), float(p), upper=upper))  # type: ignore[arg-type]
    qq, nn, pp = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (q, n, p)))
    lo, hi = _normal_bracket(tail, qq, nn, pp, upper=upper)
    while True:
        open_ = hi - lo > 1.0
        if not open_.any():
            break
        mid = np.floor((lo + hi) / 2.0)
        value = np.asarray(tail(np.where(open_, mid, 0.0), nn, pp))
        good = (
            (value <= qq * (1.0 + _SEARCH_RTOL)) if upper else (value >= qq * (1.0 - _SEARCH_RTOL))
        )
        hi = np.where(open_ & good, mid, hi)
        lo = np.where(open_ & ~good, mid, lo)
    return hi


def _scalar_search(tail: Any, q: float, n: float, p: float, *, upper: bool) -> float:
    """:func:`_discrete_search` for one ``(q, n, p)``: the bisection runs on scalar tails, then
    the answer is checked with the array tails the array search uses (they differ from the scalar
    ones by ``< 1e-13``, which decides only where a tail lies that close to ``q``, as at
    ``binom.ppf(0.5, 795, 0.5)``): it moves while its left neighbour also reaches ``q`` or it does
    not, so it is the array search's answer (the tail is monotone in ``k``)."""
    bracket = _normal_bracket(tail, np.float64(q), np.float64(n), np.float64(p), upper=upper)
    lo, hi = float(bracket[0]), float(bracket[1])
    while hi - lo > 1.0:
        mid = math.floor((lo + hi) / 2.0)
        value = float(tail(float(mid), n, p))
        good = (value <= q * (1.0 + _SEARCH_RTOL)) if upper else (value >= q * (1.0 - _SEARCH_RTOL))
        hi, lo = (mid, lo) if good else (hi, mid)

    def reaches(k: float) -> bool:
        if k >= n:
            return True
        value = tail(np.array([max(k, 0.0)]), np.array([n]), np.array([p]))
        return bool(_reached(value, np.float64(q), upper=upper)[0])

    while hi >= 1.0 and reaches(hi - 1.0):
        hi -= 1.0
    while hi < n and not reaches(hi):
        hi += 1.0
    return hi


def binom_ppf(q: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """Smallest ``k`` with ``P(X ≤ k) ≥ q`` (``scipy.stats.binom.ppf``; −1 at ``q = 0``, ``n`` at
    ``q = 1``: the upper tail is positive up to ``n`` even where it underflows).

    For ``q > ½`` the search runs on the upper tail (``P(X > k) ≤ 1 − q``), as Boost does, so
    a ``q`` near 1 is not lost in ``1 − cdf`` rounding.
    """
    qq = np.asarray(q, dtype=np.float64)
    low = _discrete_search(bdtr, qq, n, p, upper=False)
    high = _discrete_search(bdtrc, 1.0 - qq, n, p, upper=True) if (qq > 0.5).any() else low
    out = np.where(qq == 1.0, np.asarray(n, dtype=np.float64), np.where(qq > 0.5, high, low))
    return _out(np.where(qq == 0.0, -1.0, np.where((qq < 0) | (qq > 1), np.nan, out)))


def binom_isf(q: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """Smallest ``k`` with ``P(X > k) ≤ q`` (``scipy.stats.binom.isf``; −1 at ``q = 1``, ``n`` at
    ``q = 0``)."""
    qq = np.asarray(q, dtype=np.float64)
    low = _discrete_search(bdtrc, qq, n, p, upper=True)
    high = _discrete_search(bdtr, 1.0 - qq, n, p, upper=False) if (qq > 0.5).any() else low
    out = np.where(qq == 0.0, np.asarray(n, dtype=np.float64), np.where(qq > 0.5, high, low))
    return _out(np.where(qq == 1.0, -1.0, np.where((qq < 0) | (qq > 1), np.nan, out)))
